package cluster

import (
	"context"
	"time"
)

// claimLoop claims pending runs up to free capacity and starts a worker for each. A full
// batch claims again at once (more may be waiting); otherwise it sleeps until a wake-up
// (a submission, a finished run), the poll interval or the earliest waiting retry coming
// due (claimWait), whichever is first. It never claims while draining or
// while its own lease renewals fail (§4.9): a member that cannot renew must not take on
// work it could not keep.
func (m *Member) claimLoop() {
	timer := time.NewTimer(m.cfg.PollInterval)
	defer timer.Stop()
	backlog := false // the last claim was full: more work is waiting
	for {
		select {
		case <-m.quitClaim:
			return
		default:
		}
		full, tried := m.claimOnce()
		m.deps.Events.claimPass()
		if full {
			backlog = true
			continue
		} else if tried {
			backlog = false
		}
		timer.Reset(m.claimWait())
		select {
		case <-m.quitClaim:
			return
		case <-m.wake:
			if backlog {
				m.gather()
			}
		case <-timer.C:
			m.shardsHint.Store(true)
		}
	}
}

// gatherWait bounds how long a backlogged member lets a freed slot idle while it waits
// for more to free (see gather).
const gatherWait = 3 * time.Millisecond

// gather delays the claim of a member whose work is backed up until a quarter of its
// batch is free, or gatherWait passed. Each claim is a statement and a commit; when slots
// free one at a time under a backlog of short runs, claiming each alone costs one of
// both per run, and the history's CPU is what bounds throughput then. A member with no
// backlog claims at once, so pickup latency is untouched.
func (m *Member) gather() {
	want := max(1, m.cfg.ClaimBatch/4)
	if m.claimable() >= want {
		return
	}
	t := time.NewTimer(gatherWait)
	defer t.Stop()
	for m.claimable() < want {
		select {
		case <-m.quitClaim:
			return
		case <-t.C:
			return
		case <-m.wake:
		}
	}
}

// claimOnce claims one batch — shards of sharded runs first, then runs (SPEC §4.3), from
// one capacity — and reports whether it was full.
//
// Shards are looked for only when some may be pending: after a notification from the
// history (a peer's plan, a requeue), a poll, planning here, or a claim that found some.
// A slot freed here or a submission here cannot have made shards pending, and skipping
// the shard claim then spares a busy member one statement per run.
func (m *Member) claimOnce() (full, tried bool) {
	n := m.claimable()
	if n == 0 {
		return false, false
	}
	got := 0
	if m.shardsHint.Swap(false) {
		got = m.claimShards(n)
		if got > 0 {
			m.shardsHint.Store(true) // more may wait behind a full batch
		}
	}
	if got < n {
		got += m.claimRuns(n - got)
	}
	return got >= n, true
}

// claimRuns claims up to n pending runs and starts a worker for each; it answers how many
// it claimed.
func (m *Member) claimRuns(n int) int {
	ctx, cancel := m.stmt(m.root)
	got, err := m.deps.Store.Claim(ctx, m.owner, m.cfg.Pools, n, m.cfg.LeaseTTL)
	cancel()
	if err != nil {
		if m.root.Err() == nil {
			m.log.Warn("claim failed", "error", m.redact(err.Error()))
		}
		return 0
	}
	if len(got) > 0 {
		m.metrics.RunsPerClaim(len(got))
	}
	now := m.clock.Now()
	for _, c := range got {
		m.metrics.RunClaimed(c.Pool, now.Sub(c.CreatedAt))
		m.launch(&execution{claim: c, ref: Ref{ID: c.ID, Epoch: c.Epoch}})
	}
	return len(got)
}

// claimable is how many runs one claim may take now: 0 while draining, unhealthy or full.
func (m *Member) claimable() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.draining || !m.healthy {
		return 0
	}
	return min(m.cfg.MaxConcurrent-len(m.execs), m.cfg.ClaimBatch)
}

// launch registers a claimed run or shard under its own cancel token and starts its
// worker.
func (m *Member) launch(e *execution) {
	e.ctx, e.cancel = context.WithCancelCause(m.startTrace(e))
	m.mu.Lock()
	m.execs[e.key()] = e
	n := len(m.execs)
	m.mu.Unlock()
	m.metrics.InFlight(n)
	go m.work(e)
}

// release forgets a settled run and nudges the claim loop: a slot is free.
func (m *Member) release(e *execution) {
	e.cancel(nil)
	m.mu.Lock()
	delete(m.execs, e.key())
	n := len(m.execs)
	close(m.changed)
	m.changed = make(chan struct{})
	m.mu.Unlock()
	m.metrics.InFlight(n)
	m.Wake()
}
