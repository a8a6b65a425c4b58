package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
)

// approvalWorld is a world whose server runs with --require-approval run.
func approvalWorld(t *testing.T) (*world, *approvals.Service) {
	t.Helper()
	w := sqliteWorld(t, newVault(t))
	rs := runs.New(runs.Deps{Store: w.st, Loader: w.load, Clock: w.clock}, runs.Config{MaxQueued: 1000, RequireApproval: true})
	ap := approvals.New(approvals.Deps{Store: w.st, Runs: rs, Audit: w.st, Clock: w.clock.Now})
	w.svc = scheduling.New(scheduling.Deps{Store: w.st, Templates: w.tpl, Runs: rs, Clock: w.clock.Now, Audit: w.st,
		Proposer: ap, Checker: rs}, scheduling.Config{RequireApproval: true})
	ap = approvals.New(approvals.Deps{Store: w.st, Runs: rs, Backfills: w.svc, Audit: w.st, Clock: w.clock.Now})
	return w, ap
}

// SPEC §9.5: under --require-approval run a backfill post — template or inline config —
// becomes ONE change request and no run; approval creates every window as §9.4 would.
func TestBackfillUnderApprovalIsOneChangeRequest(t *testing.T) {
	t.Parallel()
	w, ap := approvalWorld(t)
	w.clock.set(day(20))
	w.template(t, "orders", windowParams)
	otto := runs.Principal{Name: "otto", Role: runs.Operator}
	vera := runs.Principal{Name: "vera", Role: runs.Operator}

	// An inline config using the window: it is checked as its first window's run.
	cfg := []byte("version: 1\nname: inline\npipeline:\n  source: { type: generate, config: { count: 1 } }\n" +
		"  sink: { type: sqlite, config: { connection_url: \"sqlite:" + w.dir + "/bf-${backfill.start}.db\", table_name: t, create_table: true } }\n")
	for name, req := range map[string]scheduling.BackfillRequest{
		"template": {Template: "orders", Params: map[string]string{"table": "t1"}, From: day(1), To: day(4), Window: "P1D"},
		"config":   {Config: cfg, From: day(1), To: day(3), Window: "P1D"},
	} {
		bf, err := w.svc.Backfill(w.ctx, otto, req)
		require.NoError(t, err, name)
		require.NotEmpty(t, bf.ChangeRequestID, name)
		require.Empty(t, bf.Runs, name)
	}
	list, err := w.st.List(w.ctx, runs.Filter{Limit: 100})
	require.NoError(t, err)
	require.Empty(t, list, "no run before approval")
	crs, err := ap.List(w.ctx, vera, approvals.Filter{})
	require.NoError(t, err)
	require.Len(t, crs, 2, "one change request per backfill, not one per window")

	for _, cr := range crs {
		require.Equal(t, "backfill", cr.TriggerKind)
		_, err := ap.Approve(w.ctx, otto, cr.ID)
		require.ErrorIs(t, err, runs.ErrForbidden, "the proposer may not approve")
		got, err := ap.Approve(w.ctx, vera, cr.ID)
		require.NoError(t, err)
		require.NotEmpty(t, got.RunID)
	}
	list, err = w.st.List(w.ctx, runs.Filter{Limit: 100})
	require.NoError(t, err)
	require.Len(t, list, 5, "3 template windows and 2 config windows")
	for _, r := range list {
		require.Equal(t, "backfill", r.TriggerKind)
		require.NotEmpty(t, r.Labels[scheduling.BackfillLabel])
	}
}

// A backfill that could never run is refused before it is proposed; secret params are
// refused (SPEC §7.4).
func TestBackfillProposalRefusals(t *testing.T) {
	t.Parallel()
	w, ap := approvalWorld(t)
	w.template(t, "orders", windowParams+"  token: { type: string, secret: true }\n")
	otto := runs.Principal{Name: "otto", Role: runs.Operator}
	_, err := w.svc.Backfill(w.ctx, otto, scheduling.BackfillRequest{Template: "orders",
		Params: map[string]string{"table": "t1", "token": "s3cr3t-value"}, From: day(1), To: day(2), Window: "P1D"})
	require.ErrorIs(t, err, runs.ErrSecretParamsRefused)
	_, err = w.svc.Backfill(w.ctx, otto, scheduling.BackfillRequest{Template: "orders",
		Params: map[string]string{}, From: day(1), To: day(2), Window: "P1D"})
	require.ErrorContains(t, err, "params.table")
	_, err = w.svc.Backfill(w.ctx, otto, scheduling.BackfillRequest{Config: []byte("version: 1\n"),
		From: day(1), To: day(2), Window: "P1D"})
	require.Error(t, err)
	crs, err := ap.List(w.ctx, otto, approvals.Filter{})
	require.NoError(t, err)
	require.Empty(t, crs)
}
