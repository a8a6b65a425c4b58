package scheduling

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// ActionBackfillProposed is the audit action of a backfill recorded as a change request.
const ActionBackfillProposed = "backfill.proposed"

// BackfillProposer records a whole backfill as one change request (approvals.Service).
// request is the JSON of the BackfillRequest; the proposer seals it like a config.
type BackfillProposer interface {
	ProposeBackfill(ctx context.Context, p runs.Principal, request []byte, name, pool string) (string, error)
}

// ConfigChecker checks a request the way a submission would, storing nothing
// (runs.Service.ValidateRequest).
type ConfigChecker interface {
	ValidateRequest(ctx context.Context, req runs.SubmitRequest) ([]string, error)
}

// proposeBackfill records the backfill as one change request after the checks its runs
// would get, so a proposal that could never run is refused now. Secret params are
// refused (SPEC §7.4): a change request may wait days for its decision.
func (s *Service) proposeBackfill(ctx context.Context, p runs.Principal, req BackfillRequest, plan backfillPlan) (*Backfill, error) {
	if s.deps.Proposer == nil {
		return nil, invalid("", "this server does not record change requests")
	}
	name := plan.id
	if req.Template != "" {
		v, err := s.deps.Templates.CheckParams(ctx, req.Template, req.Params)
		if err != nil {
			return nil, err
		}
		for _, prm := range v.Params {
			if _, ok := req.Params[prm.Name]; ok && prm.Secret {
				return nil, fmt.Errorf("params.%s: %w", prm.Name, runs.ErrSecretParamsRefused)
			}
		}
		name = req.Template
	} else if s.deps.Checker != nil && len(plan.windows) > 0 {
		// Checked as its first window's run: ${backfill.*} resolve there.
		w := plan.windows[0]
		start := w.Start.UTC()
		if _, err := s.deps.Checker.ValidateRequest(ctx, runs.SubmitRequest{Principal: p, Config: req.Config, Pool: req.Pool,
			TriggerKind: string(run.TriggerBackfill), Clock: &start, Zone: plan.loc,
			Backfill: &execute.Window{Start: start, End: w.End.UTC()}}); err != nil {
			return nil, err
		}
	}
	text, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode the backfill request: %w", err)
	}
	id, err := s.deps.Proposer.ProposeBackfill(ctx, p, text, name, req.Pool)
	if err != nil {
		return nil, fmt.Errorf("propose the backfill: %w", err)
	}
	d := backfillDetails(req, &Backfill{ID: plan.id}, plan.maxActive)
	d["change_request_id"], d["windows"] = id, len(plan.windows)
	delete(d, "runs_created")
	s.audit(ctx, p, ActionBackfillProposed, d)
	return &Backfill{ID: plan.id, ChangeRequestID: id}, nil
}

// ApproveBackfill creates the windows of an approved backfill change request, as the
// approver p, exactly as an unapproved post would (SPEC §9.5); request is what
// ProposeBackfill stored. It answers the first window's run. Approving again creates
// nothing new: the windows' run keys replay.
func (s *Service) ApproveBackfill(ctx context.Context, p runs.Principal, request []byte) (string, error) {
	var req BackfillRequest
	if err := json.Unmarshal(request, &req); err != nil {
		return "", fmt.Errorf("the stored backfill request does not decode: %w", err)
	}
	plan, err := s.planBackfill(p, req)
	if err != nil {
		return "", err
	}
	bf, err := s.startBackfill(ctx, p, req, plan)
	if err != nil {
		return "", err
	}
	if len(bf.Runs) == 0 {
		return "", nil
	}
	return bf.Runs[0].RunID, nil
}
