package cluster

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/sluicehq/sluice/domain/lease"
	"github.com/sluicehq/sluice/domain/run"
)

// parkedRun is a run stopped by an outage: the history could not be told, so it is handed
// back once it answers again (§4.9).
type parkedRun struct {
	ref      Ref
	progress Progress
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
		m.finish(e, res.outcome)
	case actHandBack:
		m.handBack(e, res.stats)
	case actPark:
		m.park(e, res.stats)
	case actDiscard:
		m.log.Warn("lease lost: the run is stopped here and its result discarded", "run_id", e.claim.ID,
			"epoch", e.ref.Epoch)
	}
	return false
}

// finish ends the run, retrying while the history does not answer: the run is done, and
// while its lease holds nobody else will run it again. A lost lease ends the retries.
func (m *Member) finish(e *execution, o Outcome) {
	for {
		ctx, cancel := m.stmt(m.root)
		err := m.deps.Store.Finish(ctx, m.cfg.InstanceID, e.ref, o, m.deps.Callbacks)
		cancel()
		switch {
		case err == nil:
			m.metrics.RunFinished(o.Status, reason(o))
			m.log.Info("run finished", "run_id", e.claim.ID, "status", o.Status, "code", o.ErrorCode,
				"rows_written", o.Stats.RowsWritten)
			return
		case errors.Is(err, run.ErrLeaseLost):
			m.log.Warn("lease lost before the run could finish; result discarded", "run_id", e.claim.ID,
				"status", o.Status)
			m.persistLogs(e.claim.ID, o.Logs) // the attempt's lines still tell what happened
			return
		}
		m.log.Warn("finishing the run failed; retrying", "run_id", e.claim.ID, "error", m.redact(err.Error()))
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
	if m.tryHandBack(e.ref, p) {
		return
	}
	m.mu.Lock()
	m.parked[e.ref.ID] = parkedRun{ref: e.ref, progress: p}
	m.mu.Unlock()
}

// park keeps an outage-stopped run for hand-back once the history answers; when it
// already answers again, the hand-back happens now.
func (m *Member) park(e *execution, p Progress) {
	m.mu.Lock()
	failing := m.renewFailing
	if failing {
		m.parked[e.ref.ID] = parkedRun{ref: e.ref, progress: p}
	}
	m.mu.Unlock()
	if !failing {
		m.handBack(e, p)
	}
}

// tryHandBack reports whether the run is settled: handed back, or already reclaimed by a
// peer (a lost lease means the run is not ours to hand back).
func (m *Member) tryHandBack(ref Ref, p Progress) bool {
	ctx, cancel := m.stmt(m.root)
	err := m.deps.Store.HandBack(ctx, m.cfg.InstanceID, ref, p)
	cancel()
	switch {
	case err == nil:
		m.log.Info("run handed back as pending", "run_id", ref.ID, "rows_written", p.RowsWritten)
		return true
	case errors.Is(err, run.ErrLeaseLost):
		m.log.Info("run was already reclaimed by a peer; nothing to hand back", "run_id", ref.ID)
		return true
	}
	m.log.Warn("handing the run back failed; retrying when the history answers", "run_id", ref.ID,
		"error", m.redact(err.Error()))
	return false
}

// handBackParked hands back every parked run; the ones the history still refuses stay.
func (m *Member) handBackParked() {
	m.mu.Lock()
	list := make([]parkedRun, 0, len(m.parked))
	for _, p := range m.parked {
		list = append(list, p)
	}
	m.mu.Unlock()
	for _, p := range list {
		if m.tryHandBack(p.ref, p.progress) {
			m.mu.Lock()
			delete(m.parked, p.ref.ID)
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
