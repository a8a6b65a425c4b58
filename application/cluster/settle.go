package cluster

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/lease"
	"github.com/sluicehq/sluice/domain/run"
)

// parkedRun is a run (or shard) stopped by an outage: the history could not be told, so
// it is handed back once it answers again (§4.9).
type parkedRun struct {
	ref      Ref
	shard    *ShardRef // set for a shard; ref is then unused
	progress Progress
	runName  string // for the count of a run its last shard ends
}

// parkedOf is what a hand-back of e needs.
func parkedOf(e *execution, p Progress) parkedRun {
	pr := parkedRun{ref: e.ref, progress: p, runName: e.claim.Name}
	if e.shard != nil {
		ref := e.shard.Ref
		pr.shard = &ref
	}
	return pr
}

// name is how logs name the parked item.
func (p parkedRun) name() []any {
	if p.shard != nil {
		return []any{"run_id", p.shard.RunID, "shard", p.shard.Index}
	}
	return []any{"run_id", p.ref.ID}
}

// settle writes how a run ended. A panic here (a callback builder, a store bug) fails the
// run with pipeline_error once; a second panic leaves it to lease expiry.
func (m *Member) settle(e *execution, res result) {
	if e.lost.Load() {
		res = result{act: actDiscard, stats: res.stats}
	}
	panicked := m.settleSafely(e, res)
	if !panicked || res.act != actFinish || res.outcome.ErrorCode == string(run.CodePipelineError) {
		return
	}
	m.settleSafely(e, m.failed(run.CodePipelineError, "internal error while finishing the run", res.stats))
}

// settleSafely settles once and reports whether it panicked.
func (m *Member) settleSafely(e *execution, res result) (panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			m.log.Error("settling a run panicked", "run_id", e.claim.ID, "panic", fmt.Sprint(v),
				"stack", string(debug.Stack()))
			panicked = true
		}
	}()
	switch res.act {
	case actFinish:
		m.finish(e, m.decide(e, res))
	case actHandBack:
		m.handBack(e, res.stats)
	case actPark:
		m.park(e, res.stats)
	case actDiscard:
		m.log.Warn("lease lost: the run is stopped here and its result discarded", "run_id", e.claim.ID,
			"key", e.key(), "epoch", e.claim.Epoch)
	case actSharded:
		m.log.Info("run handed over to its shards", "run_id", e.claim.ID)
	}
	return false
}

// finish ends the run, retrying while the history does not answer: the run is done, and
// while its lease holds nobody else will run it again. A lost lease ends the retries.
func (m *Member) finish(e *execution, o Outcome) {
	span := m.startFinish(e, o)
	defer span.End()
	for {
		ctx, cancel := m.stmt(m.root)
		err := m.finishOnce(ctx, e, o)
		cancel()
		switch {
		case err == nil && o.Retry:
			m.retried(e, o)
			return
		case err == nil:
			m.log.Info("run finished", finishedAttrs(e, o)...)
			return
		case errors.Is(err, run.ErrLeaseLost):
			span.Fail("lease lost before the run could finish")
			m.log.Warn("lease lost before the run could finish; result discarded", "run_id", e.claim.ID,
				"status", o.Status)
			m.persistLogs(e.claim.ID, o.Logs) // the attempt's lines still tell what happened
			return
		}
		m.log.Warn("finishing the run failed; retrying", "run_id", e.claim.ID, "error", m.redact(err.Error()))
		span.Event("retry", execute.A("error", m.redact(err.Error())))
		if e.lost.Load() {
			return
		}
		t := time.NewTimer(m.retryDelay())
		select {
		case <-m.root.Done():
			t.Stop()
			m.log.Warn("member stopped before the run could finish; its lease will expire", "run_id", e.claim.ID)
			return
		case <-t.C:
		}
	}
}

// finishOnce writes the end of a run, or of a shard (which ends its run when it is the
// last one), and counts the run that ended.
func (m *Member) finishOnce(ctx context.Context, e *execution, o Outcome) error {
	if e.shard == nil {
		o.Tenant, o.Name = e.claim.Tenant, e.claim.Name
		var err error
		if m.finishes != nil {
			// The group's batch is bounded by its own statement timeout.
			err = m.finishes.finish(Finishing{Ref: e.ref, Outcome: o})
		} else {
			err = m.deps.Store.Finish(ctx, m.cfg.InstanceID, e.ref, o, m.deps.Callbacks)
		}
		if err == nil && !o.Retry {
			m.countFinished(e.claim, o)
			m.runChanged(e.claim.ID)
		}
		return err
	}
	parent, err := m.deps.Shards.FinishShard(ctx, m.cfg.InstanceID, e.shard.Ref, o, m.deps.Callbacks)
	if err == nil {
		m.runEnded(e.claim.ID, e.claim.Name, parent)
		m.runChanged(e.claim.ID) // the shard's lines went to its run's log; the run may have ended
	}
	return err
}

// runChanged tells the followers of run id's log that it changed (after the commit).
func (m *Member) runChanged(id string) {
	if m.deps.Changes != nil {
		m.deps.Changes.Changed(id)
	}
}

// persistLogs writes lines a Finish could not, best effort.
func (m *Member) persistLogs(runID string, lines []LogLine) {
	if len(lines) == 0 {
		return
	}
	ctx, cancel := m.stmt(m.root)
	defer cancel()
	if err := m.deps.Store.AppendLogs(ctx, runID, lines); err != nil {
		m.log.Warn("persisting run log lines failed; they are dropped", "run_id", runID,
			"lines", len(lines), "error", m.redact(err.Error()))
	}
}

// handBack returns the run to pending without spending an attempt; a history that does
// not answer parks it for the lease loop.
func (m *Member) handBack(e *execution, p Progress) {
	pr := parkedOf(e, p)
	if m.tryHandBack(pr) {
		return
	}
	m.mu.Lock()
	m.parked[e.key()] = pr
	m.mu.Unlock()
}

// park keeps an outage-stopped run for hand-back once the history answers; when it
// already answers again, the hand-back happens now.
func (m *Member) park(e *execution, p Progress) {
	m.mu.Lock()
	failing := m.renewFailing
	if failing {
		m.parked[e.key()] = parkedOf(e, p)
	}
	m.mu.Unlock()
	if !failing {
		m.handBack(e, p)
	}
}

// tryHandBack reports whether the run (or shard) is settled: handed back, or already
// reclaimed by a peer (a lost lease means it is not ours to hand back).
func (m *Member) tryHandBack(p parkedRun) bool {
	ctx, cancel := m.stmt(m.root)
	var err error
	if p.shard != nil {
		var parent string
		parent, err = m.deps.Shards.HandBackShard(ctx, m.cfg.InstanceID, *p.shard, p.progress, m.deps.Callbacks)
		if err == nil {
			m.runEnded(p.shard.RunID, p.runName, parent)
		}
	} else {
		err = m.deps.Store.HandBack(ctx, m.cfg.InstanceID, p.ref, p.progress)
	}
	cancel()
	switch {
	case err == nil:
		m.log.Info("handed back as pending", append(p.name(), "rows_written", p.progress.RowsWritten)...)
		m.auditHandBack(p)
		return true
	case errors.Is(err, run.ErrLeaseLost):
		m.log.Info("already reclaimed by a peer; nothing to hand back", p.name()...)
		return true
	}
	m.log.Warn("handing back failed; retrying when the history answers",
		append(p.name(), "error", m.redact(err.Error()))...)
	return false
}

// handBackParked hands back every parked run; the ones the history still refuses stay.
func (m *Member) handBackParked() {
	m.mu.Lock()
	keys := make([]string, 0, len(m.parked))
	list := make([]parkedRun, 0, len(m.parked))
	for k, p := range m.parked {
		keys = append(keys, k)
		list = append(list, p)
	}
	m.mu.Unlock()
	for i, p := range list {
		if m.tryHandBack(p) {
			m.mu.Lock()
			delete(m.parked, keys[i])
			m.mu.Unlock()
		}
	}
}

func (m *Member) retryDelay() time.Duration {
	return min(m.cfg.PollInterval, lease.RenewInterval(m.cfg.LeaseTTL))
}

// reason is the runs_total reason label of an outcome (§10).
func reason(o Outcome) string {
	switch {
	case o.Status == string(run.Completed):
		return "ok"
	case o.Status == string(run.Cancelled):
		return "cancelled"
	case o.ErrorCode == "" || o.ErrorCode == string(run.CodePipelineError):
		return "error"
	}
	return o.ErrorCode
}
