package notify

import (
	"context"
	"sync"
)

// maxQueued bounds the cancel ids waiting for the member to take them. Past it the ids
// are folded into one "check every run": a member re-reading every flag misses none.
const maxQueued = 1024

// cancelQueue keeps cancel notifications between the receive loop, which must never
// block (a slow member would stop it reading the connection), and the member.
type cancelQueue struct {
	mu     sync.Mutex
	ids    []string
	queued map[string]bool
	all    bool          // a "" is pending: it covers every id received before it
	signal chan struct{} // capacity 1: something was pushed
}

func newCancelQueue() *cancelQueue {
	return &cancelQueue{queued: map[string]bool{}, signal: make(chan struct{}, 1)}
}

// push adds id; "" (check every run) replaces whatever is queued, because the flags it
// makes the member read include theirs.
func (q *cancelQueue) push(id string) {
	q.mu.Lock()
	switch {
	case q.all:
	case id == "" || len(q.ids) >= maxQueued:
		q.all = true
		q.ids = nil
		clear(q.queued)
	case !q.queued[id]:
		q.queued[id] = true
		q.ids = append(q.ids, id)
	}
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// pop takes the next item: a pending "" first (it is the broader one), then ids in the
// order they came.
func (q *cancelQueue) pop() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.all {
		q.all = false
		return "", true
	}
	if len(q.ids) == 0 {
		return "", false
	}
	id := q.ids[0]
	q.ids = q.ids[1:]
	delete(q.queued, id)
	return id, true
}

// forward hands queued items to out until ctx ends.
func (q *cancelQueue) forward(ctx context.Context, out chan<- string) {
	for {
		item, ok := q.pop()
		if !ok {
			select {
			case <-q.signal:
				continue
			case <-ctx.Done():
				return
			}
		}
		select {
		case out <- item:
		case <-ctx.Done():
			return
		}
	}
}
