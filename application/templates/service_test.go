package templates_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/tests/historytest"
)

var (
	admin    = runs.Principal{Name: "alice", Role: runs.Admin}
	operator = runs.Principal{Name: "olga", Role: runs.Operator}
	viewer   = runs.Principal{Name: "victor", Role: runs.Viewer}
	acme     = runs.Principal{Name: "acme-bot", Role: runs.Operator, Tenant: "acme"}
)

const cfg = `version: 1
name: orders
pool: cpu
params:
  region: { type: string, default: eu, description: where }
  token: { type: string, secret: true }
pipeline: {}
`

type submitter struct{ got []runs.SubmitRequest }

func (s *submitter) Submit(_ context.Context, r runs.SubmitRequest) (runs.SubmitResult, error) {
	s.got = append(s.got, r)
	return runs.SubmitResult{RunID: fmt.Sprintf("run-%d", len(s.got)), Status: "pending"}, nil
}

// xorSealer seals by scrambling, bound to owner and purpose.
type xorSealer struct{}

func (xorSealer) Seal(_ context.Context, owner string, p runs.Purpose, pt []byte) ([]byte, error) {
	out := []byte(owner + "|" + string(p) + "|")
	for _, c := range pt {
		out = append(out, c^0x33)
	}
	return out, nil
}

func (xorSealer) Open(_ context.Context, owner string, p runs.Purpose, ct []byte) ([]byte, error) {
	head := owner + "|" + string(p) + "|"
	if !strings.HasPrefix(string(ct), head) {
		return nil, runs.ErrVaultTampered
	}
	out := []byte{}
	for _, c := range ct[len(head):] {
		out = append(out, c^0x33)
	}
	return out, nil
}
func (xorSealer) KeyID() string  { return "x" }
func (xorSealer) FormatMax() int { return 1 }

type fixture struct {
	svc   *templates.Service
	store *store.Store
	runs  *submitter
}

func newFixture(t *testing.T, sealer runs.Sealer) fixture {
	t.Helper()
	f := fixture{store: historytest.Open(t), runs: &submitter{}}
	f.svc = templates.New(templates.Deps{Store: f.store, Runs: f.runs, Sealer: sealer,
		Loader: &execute.Loader{Decoder: configtext.Decoder{}}})
	return f
}

func TestRegisterVersionsAndViews(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	v, err := f.svc.Register(ctx, admin, templates.RegisterRequest{ID: "orders", Config: []byte(cfg), Tenants: []string{"acme"}})
	require.NoError(t, err)
	require.Equal(t, 1, v.Version)
	require.Len(t, v.Params, 2)
	v, err = f.svc.Register(ctx, admin, templates.RegisterRequest{ID: "orders", Config: []byte(cfg)})
	require.NoError(t, err)
	require.Equal(t, 2, v.Version)
	got, err := f.svc.Get(ctx, viewer, "orders")
	require.NoError(t, err)
	require.Equal(t, 2, got.Version)
	list, err := f.svc.List(ctx, operator)
	require.NoError(t, err)
	require.Len(t, list, 1)
}

func TestRegisterRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		p    runs.Principal
		req  templates.RegisterRequest
		is   error
		text string
	}{
		{"operator", operator, templates.RegisterRequest{ID: "x", Config: []byte(cfg)}, runs.ErrForbidden, "admin"},
		{"tenant admin", runs.Principal{Name: "t", Role: runs.Admin, Tenant: "acme"}, templates.RegisterRequest{ID: "x", Config: []byte(cfg)}, runs.ErrForbidden, "admin"},
		{"bad id", admin, templates.RegisterRequest{ID: "no spaces", Config: []byte(cfg)}, runs.ErrInvalidRequest, "id"},
		{"no config", admin, templates.RegisterRequest{ID: "x"}, runs.ErrInvalidRequest, "config"},
		{"bad pool", admin, templates.RegisterRequest{ID: "x", Config: []byte(cfg), Pool: "a b"}, runs.ErrInvalidRequest, "pool"},
		{"bad tenant", admin, templates.RegisterRequest{ID: "x", Config: []byte(cfg), Tenants: []string{"a b"}}, runs.ErrInvalidRequest, "tenants[0]"},
		{"bad override", admin, templates.RegisterRequest{ID: "x", Config: []byte(cfg), PoolOverride: pool.Override{Allowed: []string{"a b"}}}, runs.ErrInvalidRequest, "pool_override[0]"},
		{"bad param type", admin, templates.RegisterRequest{ID: "x", Config: []byte(strings.Replace(cfg, "type: string, default", "type: strng, default", 1))}, pipeline.ErrInvalidConfig, "params.region"},
		{"syntax", admin, templates.RegisterRequest{ID: "x", Config: []byte("version: [1\n")}, pipeline.ErrInvalidConfig, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			_, err := f.svc.Register(context.Background(), c.p, c.req)
			require.ErrorIs(t, err, c.is)
			require.Contains(t, err.Error(), c.text)
			list, err := f.store.ListTemplates(context.Background())
			require.NoError(t, err)
			require.Empty(t, list)
		})
	}
}

func TestRunSubmitsThroughTheFunnel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, xorSealer{})
	ctx := context.Background()
	_, err := f.svc.Register(ctx, admin, templates.RegisterRequest{ID: "orders", Config: []byte(cfg),
		PoolOverride: pool.Override{Allowed: []string{"gpu"}}, Tenants: []string{"acme"}})
	require.NoError(t, err)
	stored, err := f.store.LatestTemplate(ctx, "orders")
	require.NoError(t, err)
	require.True(t, stored.ConfigSealed)
	require.NotContains(t, stored.Config, "orders", "stored sealed")

	_, err = f.svc.Run(ctx, operator, "orders", templates.RunRequest{Params: map[string]string{"region": "us"}, Pool: "gpu"})
	require.NoError(t, err)
	got := f.runs.got[0]
	require.Equal(t, cfg, string(got.Config))
	require.Equal(t, "template", got.TriggerKind)
	require.Equal(t, "orders", got.TemplateID)
	require.Equal(t, 1, got.TemplateVersion)
	require.Equal(t, "gpu", got.Pool)
	require.Equal(t, map[string]string{"region": "us"}, got.Params)

	_, err = f.svc.Run(ctx, operator, "orders", templates.RunRequest{Pool: "other"})
	require.ErrorIs(t, err, pool.ErrOverrideDenied)
	require.Contains(t, err.Error(), "pool_override")
	_, err = f.svc.Run(ctx, operator, "orders", templates.RunRequest{Pool: "cpu"})
	require.NoError(t, err, "the template's own pool is always allowed")

	_, err = f.svc.Run(ctx, acme, "orders", templates.RunRequest{Tenant: "acme"})
	require.NoError(t, err)
	require.Equal(t, "tenant", f.runs.got[2].TriggerKind)
	require.Equal(t, "acme", f.runs.got[2].Tenant)
	_, err = f.svc.Run(ctx, operator, "orders", templates.RunRequest{Tenant: "beta"})
	require.ErrorIs(t, err, runs.ErrForbidden)
	require.ErrorIs(t, err, templates.ErrTenantNotAllowed)

	_, err = f.svc.Run(ctx, operator, "missing", templates.RunRequest{})
	require.ErrorIs(t, err, run.ErrNotFound)
}

func TestFanoutDerivesKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	_, err := f.svc.Register(ctx, admin, templates.RegisterRequest{ID: "orders", Config: []byte(cfg)})
	require.NoError(t, err)
	entries := []templates.FanoutEntry{{Params: map[string]string{"region": "us"}}, {Params: map[string]string{"region": "eu"}}}
	res, err := f.svc.Fanout(ctx, operator, "orders", "", entries)
	require.NoError(t, err)
	require.Len(t, res, 2)
	_, err = f.svc.Fanout(ctx, operator, "orders", "", entries)
	require.NoError(t, err)
	require.Len(t, f.runs.got, 4)
	require.Equal(t, "fanout", f.runs.got[0].TriggerKind)
	require.NotEqual(t, f.runs.got[0].IdempotencyKey, f.runs.got[1].IdempotencyKey)
	require.Equal(t, f.runs.got[0].IdempotencyKey, f.runs.got[2].IdempotencyKey, "the same request, the same keys")

	_, err = f.svc.Fanout(ctx, operator, "orders", "", nil)
	require.ErrorIs(t, err, runs.ErrInvalidRequest)
}

func TestDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	_, err := f.svc.Register(ctx, admin, templates.RegisterRequest{ID: "orders", Config: []byte(cfg)})
	require.NoError(t, err)
	require.ErrorIs(t, f.svc.Delete(ctx, operator, "orders"), runs.ErrForbidden)
	// A run made from the template that has not been claimed yet keeps it in use.
	waiting := &runs.Record{ID: "r-1", Name: "orders", Pool: "default", TriggerKind: string(run.TriggerTemplate),
		RunDate: "2026-05-01", MaxAttempts: 3, Config: cfg, TemplateID: "orders", TemplateVersion: 1, CreatedAt: time.Now()}
	_, err = f.store.Create(ctx, waiting, nil)
	require.NoError(t, err)
	require.ErrorIs(t, f.svc.Delete(ctx, admin, "orders"), templates.ErrInUse)
	_, _, err = f.store.CancelQueued(ctx, waiting.ID, nil)
	require.NoError(t, err)
	require.NoError(t, f.svc.Delete(ctx, admin, "orders"))
	_, err = f.svc.Get(ctx, viewer, "orders")
	require.True(t, errors.Is(err, run.ErrNotFound))
	_, err = f.svc.List(ctx, runs.Principal{Name: "nobody", Role: "root", Tenant: "acme"})
	require.ErrorIs(t, err, runs.ErrForbidden, "a principal without a role lists nothing")
}
