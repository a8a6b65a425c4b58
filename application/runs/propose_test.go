package runs_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
)

type proposer struct {
	mu    sync.Mutex
	calls []runs.SubmitRequest
	pools []string
}

func (p *proposer) Propose(_ context.Context, req runs.SubmitRequest, _, pool string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, req)
	p.pools = append(p.pools, pool)
	return "cr-1", nil
}

func TestRequireApprovalTurnsRequestsIntoChangeRequests(t *testing.T) {
	t.Parallel()
	prop := &proposer{}
	h := newHarness(t, withDeps(func(d *runs.Deps) { d.Proposer = prop }),
		withConfig(func(c *runs.Config) { c.RequireApproval = true }))

	for _, kind := range []string{"api", "mcp", "template", "fanout", "rollback"} {
		r := req(operator, baseConfig)
		r.TriggerKind = kind
		res := h.submit(t, r)
		require.Equal(t, "cr-1", res.ChangeRequestID, kind)
		require.Equal(t, "proposed", res.Status, kind)
		require.Empty(t, res.RunID, kind)
	}
	n, err := h.store.CountQueued(context.Background())
	require.NoError(t, err)
	require.Zero(t, n, "no run was created")
	require.Equal(t, "default", prop.pools[0], "the pool is decided before proposing")

	for _, kind := range []string{"approval", "schedule", "backfill"} {
		r := req(operator, baseConfig)
		r.TriggerKind = kind
		res := h.submit(t, r)
		require.NotEmpty(t, res.RunID, "%s runs directly", kind)
	}

	// A proposal gets the submission's checks first.
	_, err = h.svc.Submit(context.Background(), req(operator, "version: 1\nname: x\npipeline: {}\n"))
	require.ErrorIs(t, err, pipeline.ErrInvalidConfig)
	_, err = h.svc.Submit(context.Background(), req(viewer, baseConfig))
	require.ErrorIs(t, err, runs.ErrForbidden)
	require.Len(t, prop.calls, 5)
}

func TestProposeWithoutApprovalMode(t *testing.T) {
	t.Parallel()
	prop := &proposer{}
	h := newHarness(t, withDeps(func(d *runs.Deps) { d.Proposer = prop }))
	r := req(operator, baseConfig)
	r.Propose = true
	require.Equal(t, "cr-1", h.submit(t, r).ChangeRequestID)
	require.NotEmpty(t, h.submit(t, req(operator, baseConfig)).RunID, "other requests run directly")

	bare := newHarness(t)
	_, err := bare.svc.Submit(context.Background(), r)
	require.ErrorIs(t, err, runs.ErrInvalidRequest, "no proposer: refused, not run")
}
