package runs

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/domain/run"
)

// ActionProposed is the audit action of a request recorded as a change request.
const ActionProposed = "change_request.proposed"

// mustPropose says whether a request becomes a change request (SPEC §9.5): always when
// it asks to, and under --require-approval run for every request a person or an agent
// makes. Schedules were set up by an admin and run directly; an approval is the decision
// itself; a backfill's windows come from a backfill that was proposed whole
// (scheduling.Service.Backfill) and are created only once it is approved.
func (s *Service) mustPropose(req SubmitRequest) bool {
	if req.Propose {
		return true
	}
	if !s.cfg.RequireApproval {
		return false
	}
	switch run.TriggerKind(req.TriggerKind) {
	case run.TriggerApproval, run.TriggerSchedule, run.TriggerBackfill:
		return false
	}
	return true
}

// propose hands a checked request to the Proposer and audits it.
func (s *Service) propose(ctx context.Context, req SubmitRequest, name, poolName string) (SubmitResult, error) {
	if s.deps.Proposer == nil {
		return SubmitResult{}, invalid("", "this server does not record change requests")
	}
	id, err := s.deps.Proposer.Propose(ctx, req, name, poolName)
	if err != nil {
		return SubmitResult{}, fmt.Errorf("propose: %w", err)
	}
	s.audit(ctx, req.Principal, ActionProposed, "", map[string]any{"change_request_id": id,
		"name": name, "pool": poolName, "trigger_kind": req.TriggerKind})
	s.deps.Log.InfoContext(ctx, "change request proposed", "change_request_id", id, "pipeline", name,
		"pool", poolName, "proposer", req.Principal.Name)
	return SubmitResult{ChangeRequestID: id, Status: "proposed"}, nil
}
