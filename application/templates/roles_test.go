package templates_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

type auditLog struct {
	mu      sync.Mutex
	entries []runs.AuditEntry
}

func (a *auditLog) Audit(_ context.Context, e runs.AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return nil
}

func auditedFixture(t *testing.T) (fixture, *auditLog) {
	t.Helper()
	f := newFixture(t, nil)
	a := &auditLog{}
	f.svc = templates.New(templates.Deps{Store: f.store, Runs: f.runs, Audit: a,
		Loader: &execute.Loader{Decoder: configtext.Decoder{}}})
	return f, a
}

// SPEC §2.10: registering and deleting a template are state changes and are audited,
// with the admin as actor and no config in the details.
func TestRegisterAndDeleteAreAudited(t *testing.T) {
	t.Parallel()
	f, a := auditedFixture(t)
	ctx := context.Background()
	_, err := f.svc.Register(ctx, admin, templates.RegisterRequest{ID: "orders", Config: []byte(cfg), Tenants: []string{"acme"}})
	require.NoError(t, err)
	require.NoError(t, f.svc.Delete(ctx, admin, "orders"))
	// Refused calls change nothing and are not audited as changes.
	require.Error(t, f.svc.Delete(ctx, admin, "orders"))
	_, err = f.svc.Register(ctx, operator, templates.RegisterRequest{ID: "orders", Config: []byte(cfg)})
	require.ErrorIs(t, err, runs.ErrForbidden)

	require.Len(t, a.entries, 2)
	reg, del := a.entries[0], a.entries[1]
	require.Equal(t, templates.ActionRegistered, reg.Action)
	require.Equal(t, "alice", reg.Actor)
	require.Equal(t, "orders", reg.Details["template_id"])
	require.Equal(t, 1, reg.Details["version"])
	require.Equal(t, []string{"acme"}, reg.Details["tenants"])
	require.NotContains(t, reg.Details, "config")
	require.False(t, reg.At.IsZero())
	require.Equal(t, templates.ActionDeleted, del.Action)
	require.Equal(t, "alice", del.Actor)
	require.Equal(t, "orders", del.Details["template_id"])
}

// SPEC §2.2: a tenant principal reads the templates that list its tenant — and only
// those; another tenant's template is not found.
func TestTenantPrincipalsReadTheirTemplates(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	for id, tenants := range map[string][]string{"mine": {"acme"}, "theirs": {"globex"}} {
		_, err := f.svc.Register(ctx, admin, templates.RegisterRequest{ID: id, Config: []byte(cfg), Tenants: tenants})
		require.NoError(t, err)
	}
	_, err := f.svc.Register(ctx, admin, templates.RegisterRequest{ID: "shared", Config: []byte(cfg), AllTenants: true})
	require.NoError(t, err)

	acmeViewer := runs.Principal{Name: "acme-viewer", Role: runs.Viewer, Tenant: "acme"}
	list, err := f.svc.List(ctx, acmeViewer)
	require.NoError(t, err)
	ids := []string{}
	for _, v := range list {
		ids = append(ids, v.ID)
	}
	require.ElementsMatch(t, []string{"mine", "shared"}, ids)
	v, err := f.svc.Get(ctx, acmeViewer, "mine")
	require.NoError(t, err)
	require.Equal(t, "mine", v.ID)
	_, err = f.svc.Get(ctx, acmeViewer, "theirs")
	require.ErrorIs(t, err, run.ErrNotFound)

	all, err := f.svc.List(ctx, viewer)
	require.NoError(t, err)
	require.Len(t, all, 3, "untenanted principals read every template")
}

// SPEC §14.1: a template whose name or pool uses a secret param is refused at register.
func TestRegisterRefusesMisplacedSecretParams(t *testing.T) {
	t.Parallel()
	f, a := auditedFixture(t)
	ctx := context.Background()
	for key, text := range map[string]string{
		"name": "version: 1\nname: \"orders-${param.token}\"\nparams:\n  token: { type: string, secret: true }\npipeline: {}\n",
		"pool": "version: 1\nname: orders\npool: \"${param.token}\"\nparams:\n  token: { type: string, secret: true }\npipeline: {}\n",
	} {
		_, err := f.svc.Register(ctx, admin, templates.RegisterRequest{ID: "orders", Config: []byte(text)})
		var me *pipeline.SecretMisplacedError
		require.ErrorAs(t, err, &me, key)
		require.Equal(t, key, me.Path)
		require.Equal(t, "token", me.Param)
	}
	_, err := f.store.LatestTemplate(ctx, "orders")
	require.ErrorIs(t, err, run.ErrNotFound, "nothing was registered")
	require.Empty(t, a.entries)

	// A non-secret param in the name is fine.
	ok := "version: 1\nname: \"orders-${param.region}\"\nparams:\n  region: { type: string }\n  token: { type: string, secret: true }\npipeline: {}\n"
	_, err = f.svc.Register(ctx, admin, templates.RegisterRequest{ID: "orders", Config: []byte(ok)})
	require.NoError(t, err)
}
