package storecontract

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
)

func schemaCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a migrated history has nothing pending and migrating again is a no-op": func(t *testing.T, e *env) {
			applied, pending, err := e.s.MigrationStatus(e.ctx)
			require.NoError(t, err)
			require.Empty(t, pending)
			require.Contains(t, applied, "0001_history")
			require.NoError(t, e.s.CheckSchema(e.ctx))
			require.NoError(t, e.s.Migrate(e.ctx))
			again, _, err := e.s.MigrationStatus(e.ctx)
			require.NoError(t, err)
			require.Equal(t, applied, again)
		},
		"a fresh history reports every migration pending and is refused until migrated": func(t *testing.T, e *env) {
			fresh, err := store.Open(e.ctx, e.h.NewURL(t), store.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = fresh.Close() })
			applied, pending, err := fresh.MigrationStatus(e.ctx)
			require.NoError(t, err)
			require.Empty(t, applied)
			require.Contains(t, pending, "0001_history")
			err = fresh.CheckSchema(e.ctx)
			require.ErrorIs(t, err, store.ErrSchemaBehind)
			require.ErrorContains(t, err, "sluice migrate up")
		},
		"a schema newer than the binary is refused naming sluice migrate status": func(t *testing.T, e *env) {
			_, err := e.s.DB().ExecContext(e.ctx,
				"INSERT INTO sluice_migrations (name, group_id, migrated_at) VALUES ('9999', 99, CURRENT_TIMESTAMP)")
			require.NoError(t, err)
			err = e.s.CheckSchema(e.ctx)
			require.ErrorIs(t, err, store.ErrSchemaTooNew)
			require.ErrorContains(t, err, "sluice migrate status")
			require.ErrorContains(t, err, "9999")
			require.ErrorIs(t, e.s.Migrate(e.ctx), store.ErrSchemaTooNew)
			applied, _, err := e.s.MigrationStatus(e.ctx)
			require.NoError(t, err)
			require.Contains(t, applied, "9999")
		},
		"members starting together migrate once": func(t *testing.T, e *env) {
			url := e.h.NewURL(t)
			var (
				wg     sync.WaitGroup
				shared *store.Store
			)
			for range 3 {
				s := shared
				if s == nil {
					var err error
					s, err = store.Open(e.ctx, url, store.Options{})
					require.NoError(t, err)
					t.Cleanup(func() { _ = s.Close() })
				}
				if !e.h.Shared {
					shared = s // memory: one database, migrated by three goroutines at once
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					assertNoError(t, s.Migrate(e.ctx))
				}()
			}
			wg.Wait()
			s := shared
			if s == nil {
				var err error
				s, err = store.Open(e.ctx, url, store.Options{})
				require.NoError(t, err)
				t.Cleanup(func() { _ = s.Close() })
			}
			require.NoError(t, s.CheckSchema(e.ctx))
		},
	}
}
