package cluster

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// Audit actions of the transitions no person asked for (SPEC §2.10: every state change
// is audited). Their actor is the member that made them: "member:<instance id>" (a
// principal name cannot hold ':', so the two never collide).
const (
	ActionReclaimed       = "run.reclaimed"    // lease expired: requeued or cancelled
	ActionPoisoned        = "run.poisoned"     // lease expired on its last attempt: failed
	ActionPoolTimeout     = "run.pool_timeout" // its pool stayed unserved: failed
	ActionHandedBack      = "run.handed_back"  // drain or outage: back to pending
	ActionShardReclaimed  = "shard.reclaimed"
	ActionShardHandedBack = "shard.handed_back"
)

// Auditor appends audit entries; the history store implements it.
type Auditor interface {
	Audit(ctx context.Context, e runs.AuditEntry) error
}

// actor is this member as the audit names it.
func (m *Member) actor() string { return "member:" + m.cfg.InstanceID }

// audit records one system transition of runID. The transition is committed already;
// a failed write is logged (by runs.WriteAudit), never retried or undone.
func (m *Member) audit(action, runID string, details map[string]any) {
	if m.deps.Audit == nil {
		return
	}
	ctx, cancel := m.stmt(m.root)
	defer cancel()
	runs.WriteAudit(ctx, m.deps.Audit, m.log, runs.AuditEntry{At: m.clock.Now().UTC().Truncate(time.Microsecond),
		Actor: m.actor(), Action: action, RunID: runID, Details: details})
}

// auditReclaimed records what a reclaim did to each run: a failed run was poisoned
// (its last attempt's lease expired).
func (m *Member) auditReclaimed(got []Reclaimed) {
	for _, r := range got {
		action := ActionReclaimed
		d := map[string]any{"outcome": r.Outcome, "instance_id": m.cfg.InstanceID}
		if r.Outcome == string(run.Failed) {
			action, d["code"] = ActionPoisoned, string(run.CodePoisoned)
		}
		m.audit(action, r.ID, d)
	}
}

// auditHandBack records a run (or shard) handed back as pending without spending an
// attempt.
func (m *Member) auditHandBack(p parkedRun) {
	d := map[string]any{"rows_written": p.progress.RowsWritten}
	if p.shard != nil {
		d["shard"] = p.shard.Index
		m.audit(ActionShardHandedBack, p.shard.RunID, d)
		return
	}
	m.audit(ActionHandedBack, p.ref.ID, d)
}
