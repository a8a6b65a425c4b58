package runs

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// queueRecheck is how long a count of pending and queued runs may stand in for a fresh
// one while the queue is far from its limit.
const queueRecheck = time.Second

// queueLimit enforces --max-queued-runs (SPEC §2.3: 429 once the queue is full; §14.3:
// exact under concurrent submits) without a count(*) over the pending runs for every
// submission — the statement grows with the queue, so under a burst it was the costliest
// part of a submit.
//
// Far from the limit no count is taken: the last count plus every run this process
// admitted since before that count started (an admitted run whose insert had not
// committed may be missing from it) is an upper bound of the queue as this process
// sees it, and while it stays within half the limit a run is admitted at once. Near the
// limit, or when the count is older than queueRecheck, the decision is the store's: it
// counts again in the transaction of the insert (Record.QueueLimit), one submit at a
// time, adding the runs admitted at once that may still be on their way to their insert,
// as they are at that count (Record.QueueInFlight) — that is what makes the limit exact.
type queueLimit struct {
	max   int
	count func(ctx context.Context) (int, error)
	now   func() time.Time

	mu       sync.Mutex
	last     int       // the last count
	at       time.Time // when it was taken; zero = never
	admitted int       // runs admitted by this process, ever
	done     int       // of those, the ones whose submit returned
	doneAt   int       // done when the last count started
	inFlight int       // runs admitted at once whose submit has not returned
}

// admission is admit's answer: with limit > 0 the store decides with the insert.
type admission struct {
	limit    int
	inFlight func() int // the runs admitted at once whose submit has not returned, now
	release  func()     // call once the submit returned, stored or not
}

// admit answers whether one more run may be queued: ErrQueueFull when a fresh count is
// at the limit, else an admission the store may still have to confirm.
func (q *queueLimit) admit(ctx context.Context) (admission, error) {
	if q.max <= 0 {
		return admission{release: func() {}}, nil
	}
	q.mu.Lock()
	cheap := !q.at.IsZero() && q.now().Sub(q.at) < queueRecheck && 2*(q.last+q.admitted-q.doneAt+1) <= q.max
	if cheap {
		q.admitted++
		q.inFlight++
		q.mu.Unlock()
		return admission{release: func() { q.release(true) }}, nil
	}
	doneAt := q.done
	q.mu.Unlock()
	n, err := q.count(ctx)
	if err != nil {
		return admission{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.last, q.at, q.doneAt = n, q.now(), doneAt
	if n >= q.max {
		return admission{}, QueueFull(n, 0, q.max)
	}
	q.admitted++
	return admission{limit: q.max, inFlight: q.inFlightNow, release: func() { q.release(false) }}, nil
}

// inFlightNow is the number of runs admitted at once whose submit has not returned. The
// store asks it under its queue lock, just before its count: taking the number at
// admission instead let a submit admitted early and stored late (it waited for the lock)
// miss the runs admitted at once meanwhile — 101 waiting of a limit of 100. A run
// admitted at once after the store asked was admitted with the queue at most half full,
// this submit included, so missing it cannot reach the limit. A run stored but not yet
// returned is in both the count and this number: near the limit that may refuse a
// submit a little early, never admit one too many.
func (q *queueLimit) inFlightNow() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.inFlight
}

func (q *queueLimit) release(cheap bool) {
	q.mu.Lock()
	q.done++
	if cheap {
		q.inFlight--
	}
	q.mu.Unlock()
}

// QueueFull is the refusal naming the count, the runs admitted but not yet stored, and
// the limit; a store returns it when its own count reached the limit.
func QueueFull(n, inFlight, limit int) error {
	if inFlight > 0 {
		return fmt.Errorf("%w: %d runs are pending or queued and %d more are being submitted (limit %d)", ErrQueueFull, n, inFlight, limit)
	}
	return fmt.Errorf("%w: %d runs are pending or queued (limit %d)", ErrQueueFull, n, limit)
}
