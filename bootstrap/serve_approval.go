package bootstrap

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	apihttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
)

// Values of --require-approval (SPEC §9.5).
const (
	approvalNone = "none"
	approvalRun  = "run"
)

func registerApproval(fs *pflag.FlagSet, v *string) {
	fs.StringVar(v, "require-approval", approvalNone, "none, or run: every run request from a person or an agent (a backfill: one for all its windows) becomes a change request another operator must approve; secret params are then refused (needs --auth-config with two operator/admin principals)")
}

// checkApproval validates --require-approval against the principals: a second person
// must exist to approve, so run needs at least two operator or admin principals.
func checkApproval(value string, auth authChoice) (bool, error) {
	switch value {
	case approvalNone, "":
		return false, nil
	case approvalRun:
	default:
		return false, fmt.Errorf("invalid value for --require-approval: %q is not none or run", value)
	}
	deciders := 0
	for _, p := range auth.Principals {
		if p.Tenant == "" && (p.Role == runs.Operator || p.Role == runs.Admin) {
			deciders++
		}
	}
	if deciders < 2 {
		return false, fmt.Errorf("invalid value for --require-approval: run needs --auth-config with at least two "+
			"untenanted operator or admin principals (found %d), so someone other than the proposer can approve", deciders)
	}
	return true, nil
}

// submitVia breaks the cycle between the runs funnel (which proposes through the
// approvals) and the approvals (which submit approved requests through the funnel): it
// is handed to the approvals before the funnel exists and pointed at it right after.
type submitVia struct{ svc *runs.Service }

func (v *submitVia) Submit(ctx context.Context, req runs.SubmitRequest) (runs.SubmitResult, error) {
	return v.svc.Submit(ctx, req)
}

// newApprovals builds the change-request use-cases; bind points them at the funnel.
func newApprovals(s *serveSettings, st *store.Store, log *slog.Logger) (ap *approvals.Service, bf *backfillVia, bind func(*runs.Service)) {
	via, bf := &submitVia{}, &backfillVia{}
	ap = approvals.New(approvals.Deps{Store: st, Runs: via, Backfills: bf, Sealer: runsSealer(s), Audit: st, Log: log})
	return ap, bf, func(svc *runs.Service) { via.svc = svc }
}

// backfillVia breaks the same cycle for backfills: the schedules (which propose
// backfills through the approvals) are built after the approvals (which create an
// approved backfill's windows through the schedules).
type backfillVia struct{ svc *scheduling.Service }

func (v *backfillVia) ApproveBackfill(ctx context.Context, p runs.Principal, request []byte) (string, error) {
	return v.svc.ApproveBackfill(ctx, p, request)
}

var _ apihttp.ApprovalService = (*approvals.Service)(nil)
