package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/tests/testdb"
)

// Clustered members share the history lock; a server without --cluster needs it alone.
// Each side is refused while the other holds it, so a single server can never reclaim
// the runs a cluster is executing.
func TestSharedAndExclusiveLocksExcludeEachOther(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "h.db") },
		"postgres": func(t *testing.T) string { return testdb.Postgres(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			history := url(t)
			open := func() *store.Store {
				s, err := store.Open(context.Background(), history, store.Options{})
				require.NoError(t, err)
				t.Cleanup(func() { _ = s.Close() })
				require.NoError(t, s.Migrate(context.Background()))
				return s
			}
			ctx := context.Background()
			a, b, single := open(), open(), open()

			relA, err := a.AcquireShared(ctx)
			require.NoError(t, err)
			relB, err := b.AcquireShared(ctx)
			require.NoError(t, err, "members share the lock")
			_, err = single.AcquireExclusive(ctx, store.Holder{InstanceID: "i-1", Host: "box", PID: 7})
			require.ErrorIs(t, err, store.ErrLocked, "a single server is refused while members hold it")
			relA()
			_, err = single.AcquireExclusive(ctx, store.Holder{InstanceID: "i-1", Host: "box", PID: 7})
			require.ErrorIs(t, err, store.ErrLocked, "one member is enough to refuse it")
			relB()
			relB() // twice is harmless

			relS, err := single.AcquireExclusive(ctx, store.Holder{InstanceID: "i-1", Host: "box", PID: 7})
			require.NoError(t, err)
			_, err = a.AcquireShared(ctx)
			var locked *store.LockedError
			require.ErrorAs(t, err, &locked, "a member is refused while a single server holds the history")
			require.Equal(t, store.Holder{InstanceID: "i-1", Host: "box", PID: 7}, locked.Holder, "and is told who")
			relS()
			relA, err = a.AcquireShared(ctx)
			require.NoError(t, err)
			relA()
		})
	}
}
