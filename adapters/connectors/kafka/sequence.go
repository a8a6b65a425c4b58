package kafka

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
)

// sequence is the order of a full read: the partitions one after another, each in offset
// order, so the rows come in the same order on every read. The partition after the one
// being read is fetched ahead and its records held (up to a page), so moving on to it
// does not wait for a fetch; the others stay paused until their turn.
type sequence struct {
	queue   []int32       // partitions not started yet, in order
	cur     int32         // the partition being read; -1 once none is left
	ahead   int32         // the partition fetched ahead; -1 when none
	held    []*kgo.Record // ahead's records fetched while cur is read, in offset order
	paused  bool          // ahead is paused: held reached a page
	pending []*kgo.Record // cur's records to take before any fetched later
}

// newSequence assigns every partition to read, all but the first two paused.
func newSequence(cl *kgo.Client, topic string, assign map[int32]kgo.Offset) *sequence {
	q := &sequence{cur: -1, ahead: -1}
	for p := range assign {
		q.queue = append(q.queue, p)
	}
	slices.Sort(q.queue)
	if len(q.queue) > 2 {
		cl.PauseFetchPartitions(map[string][]int32{topic: q.queue[2:]})
	}
	if len(assign) > 0 {
		cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign})
	}
	q.cur, q.queue = pop(q.queue)
	q.ahead, q.queue = pop(q.queue)
	return q
}

func pop(q []int32) (int32, []int32) {
	if len(q) == 0 {
		return -1, q
	}
	return q[0], q[1:]
}

// advance moves on once cur is read to its end: the records held for ahead are taken
// first, and the partition after it starts being fetched ahead.
func (q *sequence) advance(cl *kgo.Client, topic string) {
	q.cur, q.pending, q.held = q.ahead, q.held, nil
	if q.paused {
		q.paused = false
		cl.ResumeFetchPartitions(map[string][]int32{topic: {q.cur}})
	}
	q.ahead, q.queue = pop(q.queue)
	if q.ahead >= 0 {
		cl.ResumeFetchPartitions(map[string][]int32{topic: {q.ahead}})
	}
}

// route takes a fetched record of a full read in sequence order: cur's now (unless
// records held before it are still pending), ahead's held for later. Other partitions'
// records (a paused partition's last fetch) are dropped: their turn fetches them again.
func (s *source) route(r *kgo.Record) error {
	q := s.seq
	switch {
	case q == nil:
		return s.take(r)
	case r.Partition == q.cur && len(q.pending) == 0:
		return s.take(r)
	case r.Partition == q.cur:
		q.pending = append(q.pending, r)
	case r.Partition == q.ahead:
		q.held = append(q.held, r)
		if len(q.held) >= s.o.batch && !q.paused {
			q.paused = true
			s.cl.PauseFetchPartitions(map[string][]int32{s.o.topic: {q.ahead}})
		}
	}
	return nil
}

// takePending takes pending records until the page is full. Taking the last record of a
// partition moves the sequence on, replacing pending with the next partition's held ones.
func (s *source) takePending() error {
	q := s.seq
	for len(q.pending) > 0 && s.rows() < s.o.batch {
		r := q.pending[0]
		q.pending[0] = nil
		q.pending = q.pending[1:]
		if err := s.take(r); err != nil {
			return err
		}
	}
	return nil
}
