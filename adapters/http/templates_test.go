package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pool"
)

type fakeTemplates struct {
	mu         sync.Mutex
	registered []templates.RegisterRequest
	started    []templates.RunRequest
	fanouts    [][]templates.FanoutEntry
	deleteErr  error
}

func (f *fakeTemplates) Register(_ context.Context, p runs.Principal, r templates.RegisterRequest) (*templates.View, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered = append(f.registered, r)
	return &templates.View{ID: r.ID, Version: len(f.registered), PoolOverride: r.PoolOverride, Tenants: r.Tenants,
		AllTenants: r.AllTenants, CreatedBy: p.Name, CreatedAt: t0}, nil
}

func (f *fakeTemplates) Get(_ context.Context, _ runs.Principal, id string) (*templates.View, error) {
	return &templates.View{ID: id, Version: 1, CreatedAt: t0}, nil
}

func (f *fakeTemplates) List(context.Context, runs.Principal) ([]*templates.View, error) {
	return []*templates.View{{ID: "orders", Version: 3, CreatedAt: t0}}, nil
}

func (f *fakeTemplates) Delete(context.Context, runs.Principal, string) error { return f.deleteErr }

func (f *fakeTemplates) Run(_ context.Context, _ runs.Principal, _ string, r templates.RunRequest) (runs.SubmitResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, r)
	return runs.SubmitResult{RunID: "r1", Status: "pending"}, nil
}

func (f *fakeTemplates) Fanout(_ context.Context, _ runs.Principal, _, _ string, e []templates.FanoutEntry) ([]templates.FanoutResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fanouts = append(f.fanouts, e)
	return []templates.FanoutResult{
		{SubmitResult: runs.SubmitResult{RunID: "r1", Status: "pending"}},
		{Err: &pool.OverrideDeniedError{Requested: "gpu", Template: "default"}},
	}, nil
}

func templateEnv(t *testing.T) (*env, *fakeTemplates) {
	f := &fakeTemplates{}
	return newEnv(t, func(_ *sluicehttp.Config, d *sluicehttp.Deps) { d.Templates = f }), f
}

func TestTemplateRoutesPermissions(t *testing.T) {
	t.Parallel()
	e, _ := templateEnv(t)
	reg := map[string]any{"id": "orders", "config": "version: 1\n"}
	cases := []struct {
		method, path, token string
		body                any
		want                int
	}{
		{"POST", "/v1/templates", operatorToken, reg, http.StatusForbidden},
		{"POST", "/v1/templates", tenantOpToken, reg, http.StatusForbidden},
		{"POST", "/v1/templates", adminToken, reg, http.StatusCreated},
		{"GET", "/v1/templates", viewerToken, nil, http.StatusOK},
		{"GET", "/v1/templates", tenantToken, nil, http.StatusOK},
		{"GET", "/v1/templates/orders", tenantToken, nil, http.StatusOK},
		{"GET", "/v1/templates/orders", viewerToken, nil, http.StatusOK},
		{"DELETE", "/v1/templates/orders", operatorToken, nil, http.StatusForbidden},
		{"DELETE", "/v1/templates/orders", adminToken, nil, http.StatusNoContent},
		{"POST", "/v1/templates/orders/runs", viewerToken, map[string]any{}, http.StatusForbidden},
		{"POST", "/v1/templates/orders/runs", tenantOpToken, map[string]any{}, http.StatusForbidden},
		{"POST", "/v1/templates/orders/runs", operatorToken, map[string]any{}, http.StatusAccepted},
		{"POST", "/v1/templates/orders/fanout", viewerToken, map[string]any{"runs": []any{}}, http.StatusForbidden},
		// A tenant viewer reads; running needs a tenant operator (SPEC §2.2, §14.1).
		{"POST", "/v1/tenants/acme/templates/orders/runs", tenantToken, map[string]any{}, http.StatusForbidden},
		{"POST", "/v1/tenants/acme/templates/orders/runs", tenantOpToken, map[string]any{}, http.StatusAccepted},
		{"POST", "/v1/tenants/beta/templates/orders/runs", tenantOpToken, map[string]any{}, http.StatusForbidden},
		{"POST", "/v1/tenants/acme/templates/orders/runs", viewerToken, map[string]any{}, http.StatusForbidden},
		{"POST", "/v1/tenants/acme/templates/orders/runs", operatorToken, map[string]any{}, http.StatusAccepted},
	}
	for _, c := range cases {
		rec := e.do(t, c.method, c.path, c.token, c.body)
		require.Equal(t, c.want, rec.Code, "%s %s: %s", c.method, c.path, rec.Body.String())
	}
}

func TestTemplateBodies(t *testing.T) {
	t.Parallel()
	e, f := templateEnv(t)
	rec := e.do(t, "POST", "/v1/templates", adminToken, map[string]any{"id": "orders", "config": map[string]any{"version": 1},
		"pool_override": []string{"gpu"}, "tenants": "*"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	var out map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.Equal(t, []any{"gpu"}, out["pool_override"])
	require.Equal(t, "*", out["tenants"])
	require.Equal(t, pool.Override{Allowed: []string{"gpu"}}, f.registered[0].PoolOverride)
	require.True(t, f.registered[0].AllTenants)

	for _, bad := range []map[string]any{
		{"id": "x", "config": "v", "pool_override": "yes"},
		{"id": "x", "config": "v", "tenants": 3},
		{"id": "x", "config": "v", "unknown": 1},
	} {
		rec = e.do(t, "POST", "/v1/templates", adminToken, bad)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v: %s", bad, rec.Body.String())
	}

	rec = e.do(t, "POST", "/v1/tenants/acme/templates/orders/runs", operatorToken,
		map[string]any{"params": map[string]any{"n": 10, "on": true, "s": "x"}, "pool": "gpu", "run_key": "k"})
	require.Equal(t, http.StatusAccepted, rec.Code)
	got := f.started[0]
	require.Equal(t, "acme", got.Tenant)
	require.Equal(t, map[string]string{"n": "10", "on": "true", "s": "x"}, got.Params)
	require.Equal(t, "gpu", got.Pool)
	rec = e.do(t, "POST", "/v1/templates/orders/runs", operatorToken, map[string]any{"params": map[string]any{"n": []int{1}}})
	require.Equal(t, http.StatusBadRequest, rec.Code)

	rec = e.do(t, "POST", "/v1/templates/orders/fanout", operatorToken, map[string]any{"runs": []any{
		map[string]any{"params": map[string]any{"a": "1"}}, map[string]any{"params": map[string]any{"a": "2"}, "labels": map[string]string{"k": "v"}}}})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"run_id":"r1"`)
	require.Contains(t, rec.Body.String(), `"code":"pool_override_denied"`)
	require.Len(t, f.fanouts[0], 2)

	f.deleteErr = templates.ErrInUse
	rec = e.do(t, "DELETE", "/v1/templates/orders", adminToken, nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Contains(t, rec.Body.String(), "template_in_use")
}

func TestTemplateRoutesWithoutService(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, "GET", "/v1/templates", adminToken, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
}

func TestVaultKeyRequiredIs422(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.submit = func(runs.SubmitRequest) (runs.SubmitResult, error) {
		return runs.SubmitResult{}, runs.ErrVaultKeyRequired
	}
	rec := e.do(t, "POST", "/v1/runs", operatorToken, map[string]any{"config": "version: 1\n"})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "vault_key_required")
	require.Contains(t, rec.Body.String(), "--vault-key")
}
