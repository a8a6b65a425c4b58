package storecontract

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/run"
)

// templateCases: versions, settings round trips, and deletion refused while runs wait.
func templateCases() map[string]func(*testing.T, *env) {
	tpl := func(id string) *templates.Template {
		return &templates.Template{ID: id, Config: "version: 1\n", CreatedBy: "admin", CreatedAt: time.Now().UTC()}
	}
	return map[string]func(*testing.T, *env){
		"re-registering makes the next version": func(t *testing.T, e *env) {
			a := tpl("orders")
			a.Pool, a.PoolOverride, a.Tenants = "gpu", pool.Override{Allowed: []string{"cpu", "gpu"}}, []string{"acme"}
			require.NoError(t, e.s.AddTemplate(e.ctx, a))
			require.Equal(t, 1, a.Version)
			b := tpl("orders")
			b.PoolOverride, b.AllTenants, b.ConfigSealed = pool.Override{Any: true}, true, true
			require.NoError(t, e.s.AddTemplate(e.ctx, b))
			require.Equal(t, 2, b.Version)
			require.NoError(t, e.s.AddTemplate(e.ctx, tpl("another")))

			got, err := e.s.LatestTemplate(e.ctx, "orders")
			require.NoError(t, err)
			require.Equal(t, 2, got.Version)
			require.True(t, got.PoolOverride.Any)
			require.True(t, got.AllTenants)
			require.True(t, got.ConfigSealed)

			list, err := e.s.ListTemplates(e.ctx)
			require.NoError(t, err)
			require.Len(t, list, 2)
			require.Equal(t, "another", list[0].ID)
			require.Equal(t, 2, list[1].Version)
		},
		"versions are listed newest first without the config": func(t *testing.T, e *env) {
			a := tpl("orders")
			a.Tenants = []string{"acme"}
			require.NoError(t, e.s.AddTemplate(e.ctx, a))
			b := tpl("orders")
			b.Pool, b.AllTenants, b.ConfigSealed, b.CreatedBy = "gpu", true, true, "root"
			require.NoError(t, e.s.AddTemplate(e.ctx, b))
			require.NoError(t, e.s.AddTemplate(e.ctx, tpl("another")))

			vs, err := e.s.TemplateVersions(e.ctx, "orders")
			require.NoError(t, err)
			require.Len(t, vs, 2)
			require.Equal(t, 2, vs[0].Version)
			require.Equal(t, "root", vs[0].CreatedBy)
			require.Equal(t, "gpu", vs[0].Pool)
			require.True(t, vs[0].AllTenants)
			require.True(t, vs[0].ConfigSealed)
			require.Equal(t, 1, vs[1].Version)
			require.Equal(t, "admin", vs[1].CreatedBy)
			require.Equal(t, []string{"acme"}, vs[1].Tenants)
			require.Equal(t, a.CreatedAt.UnixMilli(), vs[1].CreatedAt.UnixMilli())

			_, err = e.s.TemplateVersions(e.ctx, "nope")
			require.ErrorIs(t, err, run.ErrNotFound)
		},
		"settings round trip": func(t *testing.T, e *env) {
			a := tpl("x")
			a.Pool, a.PoolOverride, a.Tenants = "gpu", pool.Override{Allowed: []string{"cpu"}}, []string{"acme", "beta"}
			require.NoError(t, e.s.AddTemplate(e.ctx, a))
			got, err := e.s.LatestTemplate(e.ctx, "x")
			require.NoError(t, err)
			require.Equal(t, "gpu", got.Pool)
			require.Equal(t, []string{"cpu"}, got.PoolOverride.Allowed)
			require.Equal(t, []string{"acme", "beta"}, got.Tenants)
			require.False(t, got.AllTenants)
		},
		"missing templates are not found": func(t *testing.T, e *env) {
			_, err := e.s.LatestTemplate(e.ctx, "nope")
			require.ErrorIs(t, err, run.ErrNotFound)
			require.ErrorIs(t, e.s.DeleteTemplate(e.ctx, "nope"), run.ErrNotFound)
		},
		"delete is refused while a run waits": func(t *testing.T, e *env) {
			require.NoError(t, e.s.AddTemplate(e.ctx, tpl("orders")))
			r := e.create(t, rec("p", func(r *runs.Record) { r.TemplateID, r.TemplateVersion = "orders", 1 }))
			require.ErrorIs(t, e.s.DeleteTemplate(e.ctx, "orders"), templates.ErrInUse)
			_, ok, err := e.s.CancelQueued(e.ctx, r.ID, nil)
			require.NoError(t, err)
			require.True(t, ok)
			require.NoError(t, e.s.DeleteTemplate(e.ctx, "orders"))
			_, err = e.s.LatestTemplate(e.ctx, "orders")
			require.ErrorIs(t, err, run.ErrNotFound)
		},
	}
}
