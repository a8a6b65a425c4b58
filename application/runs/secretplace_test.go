package runs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// secretNameConfig uses the secret in the pipeline's name, which every run view shows.
var secretNameConfig = strings.Replace(secretConfig, "name: orders", `name: "orders-${param.pw}"`, 1)

// A secret param may not reach the fields the run resource shows in clear (SPEC §14.1):
// the config's name or pool, and the request's name, labels, run_key or pool.
func TestSecretParamMisplaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, withDeps(func(d *runs.Deps) { d.Sealer = fakeSealer{id: "k1"} }))

	r := req(operator, secretNameConfig)
	r.Params = map[string]string{"pw": thePassword}
	_, err := h.svc.Submit(ctx, r)
	var me *pipeline.SecretMisplacedError
	require.ErrorAs(t, err, &me)
	require.ErrorIs(t, err, pipeline.ErrSecretParamMisplaced)
	require.Equal(t, "name", me.Path)
	require.Equal(t, "pw", me.Param)
	require.NotContains(t, err.Error(), "w0rd", "the refusal never quotes the value")

	edits := map[string]func(*runs.SubmitRequest){
		"name":          func(r *runs.SubmitRequest) { r.Name = "x" + thePassword },
		"labels.owner":  func(r *runs.SubmitRequest) { r.Labels = map[string]string{"owner": thePassword} },
		"run_key":       func(r *runs.SubmitRequest) { r.RunKey = "k-" + thePassword },
		"labels.ok-key": func(r *runs.SubmitRequest) { r.Labels = map[string]string{"ok-key": "a" + thePassword + "b"} },
	}
	for path, edit := range edits {
		r := req(operator, secretConfig)
		r.Params = map[string]string{"pw": thePassword}
		edit(&r)
		_, err := h.svc.Submit(ctx, r)
		require.ErrorAs(t, err, &me, path)
		require.Equal(t, path, me.Path)
		require.NotContains(t, err.Error(), "w0rd", path)
	}
	n, err := h.store.CountQueued(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing was stored")

	// The secret used where it belongs runs.
	r = req(operator, secretConfig)
	r.Params = map[string]string{"pw": thePassword}
	r.Labels = map[string]string{"owner": "team-a"}
	h.submit(t, r)
}

// SPEC §7.4: a request with secret params that needs approval is refused, not kept in a
// change request for days.
func TestSecretParamsRefusedUnderApproval(t *testing.T) {
	t.Parallel()
	prop := &proposer{}
	h := newHarness(t, withDeps(func(d *runs.Deps) { d.Proposer = prop; d.Sealer = fakeSealer{id: "k1"} }),
		withConfig(func(c *runs.Config) { c.RequireApproval = true }))
	r := req(operator, secretConfig)
	r.TriggerKind = "template"
	r.Params = map[string]string{"pw": thePassword}
	_, err := h.svc.Submit(context.Background(), r)
	require.ErrorIs(t, err, runs.ErrSecretParamsRefused)
	require.Empty(t, prop.calls, "no change request holds the secret")

	// The MCP propose_run asks for a change request too.
	free := newHarness(t, withDeps(func(d *runs.Deps) { d.Proposer = prop; d.Sealer = fakeSealer{id: "k1"} }))
	r.Propose = true
	_, err = free.svc.Submit(context.Background(), r)
	require.ErrorIs(t, err, runs.ErrSecretParamsRefused)

	// Without secret params the request is proposed as before.
	r = req(operator, baseConfig)
	r.TriggerKind = "template"
	require.Equal(t, "cr-1", h.submit(t, r).ChangeRequestID)
	require.Len(t, prop.calls, 1)
}
