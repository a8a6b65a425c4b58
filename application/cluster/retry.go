package cluster

import (
	"math/rand/v2"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// dueSlack is added to the wait for a due retry: the member's timer and the history's
// clock (which judges not_before) tick apart, and a claim a moment early finds nothing.
const dueSlack = 10 * time.Millisecond

// decide puts how an attempt ended through the domain verb, rebuilt from the claim:
// run.Run.Finish / shard.Shard.Finish for a completed or cancelled one, and for a failed
// one run.Run.Fail / shard.Shard.Fail (under the run's policy), which decide whether it is
// retried (SPEC §14.5). The store applies the decision fenced by (owner, epoch). The
// member cannot know whether the run's cancel was requested since its claim; the store
// does, and ends such a run failed as the same verbs rule (the contract suite's oracle
// holds both to it).
func (m *Member) decide(e *execution, res result) Outcome {
	o := res.outcome
	c := e.claim
	now := m.clock.Now()
	var f *run.Failure
	st := run.Status(o.Status)
	if st == run.Failed {
		f = &run.Failure{Error: &run.Error{Code: run.ErrorCode(o.ErrorCode), Message: o.ErrorMessage},
			Transient: execute.IsTransient(res.cause)}
		if hint, ok := execute.RetryAfter(res.cause); ok {
			f.Hint = hint
		}
	}
	var errOf *run.Error
	if o.ErrorCode != "" {
		errOf = &run.Error{Code: run.ErrorCode(o.ErrorCode), Message: o.ErrorMessage}
	}
	var (
		d   run.Decision
		err error
	)
	if e.shard != nil {
		var s *shard.Shard
		if s, err = heldShard(*e.shard, m.cfg.InstanceID, now); err == nil {
			if f != nil {
				d, err = s.Fail(*f, c.Retry, false, now, m.draw())
			} else {
				err = s.Finish(shard.Status(st), errOf, now)
			}
		}
	} else {
		var r *run.Run
		if r, err = heldRun(c, m.cfg.InstanceID, now); err == nil {
			if f != nil {
				d, err = r.Fail(*f, now, m.draw())
			} else {
				err = r.Finish(st, errOf, now)
			}
		}
	}
	if err != nil {
		// The outcome breaks a rule of the lifecycle (an unknown code, say): it is written
		// as it is, and the store's own checks have the last word.
		m.log.Warn("the domain refused how the attempt ended", "run_id", c.ID, "key", e.key(),
			"status", o.Status, "error", err.Error())
		return o
	}
	o.Retry, o.RetryDelay = d.Retry, d.Delay
	return o
}

func (m *Member) draw() float64 {
	if m.deps.Draw != nil {
		return m.deps.Draw()
	}
	return rand.Float64() //nolint:gosec // jitter, not a secret
}

// retried counts and logs an attempt the store sent back to pending, and wakes the claim
// loop when its delay has passed: the retry may be claimed here as well as anywhere.
func (m *Member) retried(e *execution, o Outcome) {
	m.metrics.RunRetried(e.claim.Name)
	m.log.Info("attempt failed; the run is retried after a backoff", "run_id", e.claim.ID, "key", e.key(),
		"attempt", e.claim.Attempt, "code", o.ErrorCode, "retry_in", o.RetryDelay)
	m.armDue(o.RetryDelay)
}

// armDue makes the claim loop claim again left from now (plus dueSlack), unless it is
// to look earlier already.
func (m *Member) armDue(left time.Duration) {
	at := m.clock.Now().Add(max(left, 0) + dueSlack)
	m.mu.Lock()
	earlier := m.due.IsZero() || at.Before(m.due)
	if earlier {
		m.due = at
	}
	m.mu.Unlock()
	if earlier {
		m.Wake() // the loop's wait is computed afresh, with the new instant
	}
}

// claimWait is how long the claim loop sleeps: the poll interval, or less when a retry
// comes due sooner. A due instant that passed is forgotten once the loop claims again.
func (m *Member) claimWait() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.due.IsZero() {
		return m.cfg.PollInterval
	}
	left := m.due.Sub(m.clock.Now())
	if left <= 0 {
		m.due = time.Time{}
		return time.Millisecond // claim once more: it came due after the last claim
	}
	return min(m.cfg.PollInterval, left)
}

// readDue asks the history when the earliest waiting retry of any member comes due, so a
// retry a peer scheduled is claimed on time here too.
func (m *Member) readDue() {
	if m.deps.Due == nil {
		return
	}
	ctx, cancel := m.stmt(m.root)
	left, ok, err := m.deps.Due.NextDue(ctx)
	cancel()
	switch {
	case err != nil:
		m.log.Warn("reading the earliest due retry failed", "error", m.redact(err.Error()))
	case ok:
		m.armDue(left)
	}
}
