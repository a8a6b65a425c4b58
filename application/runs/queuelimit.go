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

// queueLimit enforces --max-queued-runs (SPEC §2.3: 429 once the queue is full) without
// a count(*) over the pending runs for every submission — the statement grows with the
// queue, so under a burst it was the costliest part of a submit.
//
// The count is exact near the limit: a submission counts afresh whenever the last count
// plus the runs accepted here since is at least half the limit, or the count is older
// than queueRecheck. Far from the limit the last count is used, which can be behind by
// what other members accepted within queueRecheck, never by enough to matter: at least
// half the limit is still free.
type queueLimit struct {
	max   int
	count func(ctx context.Context) (int, error)
	now   func() time.Time

	mu    sync.Mutex
	last  int       // the last count
	at    time.Time // when it was taken; zero = never
	since int       // runs accepted here after it
}

// admit answers nil when one more run may be queued, or ErrQueueFull.
func (q *queueLimit) admit(ctx context.Context) error {
	if q.max <= 0 {
		return nil
	}
	q.mu.Lock()
	cheap := !q.at.IsZero() && q.now().Sub(q.at) < queueRecheck && 2*(q.last+q.since+1) <= q.max
	if cheap {
		q.since++
		q.mu.Unlock()
		return nil
	}
	q.mu.Unlock()
	n, err := q.count(ctx)
	if err != nil {
		return err
	}
	q.mu.Lock()
	q.last, q.at, q.since = n, q.now(), 0
	if n < q.max {
		q.since = 1
	}
	q.mu.Unlock()
	if n >= q.max {
		return fmt.Errorf("%w: %d runs are pending or queued (limit %d)", ErrQueueFull, n, q.max)
	}
	return nil
}
