package scheduling

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/application/runs"
)

// Audit actions of schedules and backfills (SPEC §2.10).
const (
	ActionScheduleCreated = "schedule.created"
	ActionSchedulePaused  = "schedule.paused"
	ActionScheduleResumed = "schedule.resumed"
	ActionScheduleDeleted = "schedule.deleted"
	ActionBackfillPosted  = "backfill.posted"
)

// Auditor appends audit entries; the runs store implements it.
type Auditor interface {
	Audit(ctx context.Context, e runs.AuditEntry) error
}

// audit records a change. Like the runs' audit, a failed write does not undo the
// change, which is committed (a retry would repeat it); it is logged instead. Details
// never hold params or a config: they may carry secrets.
func (s *Service) audit(ctx context.Context, p runs.Principal, action string, details map[string]any) {
	if s.deps.Audit == nil {
		return
	}
	e := runs.AuditEntry{At: s.deps.Clock().UTC(), Actor: p.Name, Action: action, Details: details}
	if err := s.deps.Audit.Audit(ctx, e); err != nil {
		s.deps.Log.ErrorContext(ctx, "audit entry not written", "action", action, "error", err.Error())
	}
}

// scheduleDetails names a schedule in an audit entry.
func scheduleDetails(sc *Schedule) map[string]any {
	return map[string]any{"schedule_id": sc.ID, "template_id": sc.TemplateID, "cron": sc.Cron,
		"timezone": sc.Timezone, "paused": sc.Paused}
}

// backfillDetails names a backfill in an audit entry: what it covers and how many runs
// the call created (a re-post creates none).
func backfillDetails(req BackfillRequest, bf *Backfill, maxActive int) map[string]any {
	created := 0
	for _, r := range bf.Runs {
		if !r.Replayed {
			created++
		}
	}
	d := map[string]any{"backfill_id": bf.ID, "from": req.From.UTC().Format(time.RFC3339),
		"to": req.To.UTC().Format(time.RFC3339), "window": req.Window, "windows": len(bf.Runs),
		"runs_created": created, "max_active": maxActive}
	if req.Template != "" {
		d["template_id"] = req.Template
	}
	if req.Pool != "" {
		d["pool"] = req.Pool
	}
	return d
}
