package statepg_test

import (
	"context"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/statepg"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/state"
	"github.com/sluicehq/sluice/tests/testdb"
)

func TestSaveLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := testdb.Postgres(t)
	s, err := statepg.Open(ctx, u)
	require.NoError(t, err)
	defer s.Close()

	b, err := s.Load(ctx, "_/orders")
	require.NoError(t, err)
	require.Nil(t, b, "no bookmark yet")
	require.NoError(t, s.Save(ctx, "_/orders", state.Bookmark{Cursor: "id", Value: int64(41)}))
	require.NoError(t, s.Save(ctx, "_/orders", state.Bookmark{Cursor: "id", Value: int64(42)}))
	require.NoError(t, s.Save(ctx, "acme/x", state.Bookmark{Cursor: "at", Value: "2025-01-01T00:00:00Z"}))
	b, err = s.Load(ctx, "_/orders")
	require.NoError(t, err)
	require.Equal(t, &state.Bookmark{Cursor: "id", Value: int64(42)}, b)

	// A second store on the same database (another process) sees the same bookmarks, and
	// opening it again finds the table there.
	again, err := statepg.Open(ctx, u)
	require.NoError(t, err)
	defer again.Close()
	b, err = again.Load(ctx, "acme/x")
	require.NoError(t, err)
	require.Equal(t, "2025-01-01T00:00:00Z", b.Value)
}

func TestConcurrentOpenAndSave(t *testing.T) {
	t.Parallel()
	u := testdb.Postgres(t)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := statepg.Open(context.Background(), u)
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			if err := s.Save(context.Background(), "k", state.Bookmark{Cursor: "id", Value: int64(i)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

func TestStoresReuseAndRefuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := testdb.Postgres(t)
	stores := statepg.NewStores()
	st := pipeline.State{Type: pipeline.StatePostgres, Config: map[string]any{"connection_url": u}}
	a, err := stores.Open(ctx, st)
	require.NoError(t, err)
	b, err := stores.Open(ctx, st)
	require.NoError(t, err)
	require.Same(t, a, b, "one store per database")

	_, err = stores.Open(ctx, pipeline.State{Type: pipeline.StatePostgres})
	require.ErrorContains(t, err, "connection_url is required")
	_, err = stores.Open(ctx, pipeline.State{Type: pipeline.StateLocal})
	require.ErrorContains(t, err, `type "local" is not a postgres state`)

	stores.Close()
	_, err = stores.Open(ctx, st)
	require.ErrorContains(t, err, "closed")
}

func TestErrorsHideThePassword(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(testdb.Postgres(t))
	require.NoError(t, err)
	u.User = url.UserPassword("postgres", "Sup3rS3cretPw")
	u.Path = "/no_such_db_for_state"
	_, err = statepg.Open(context.Background(), u.String())
	require.ErrorContains(t, err, `database "no_such_db_for_state" does not exist`)
	require.NotContains(t, err.Error(), "Sup3rS3cretPw")

	_, err = statepg.Open(context.Background(), "mysql://x@y/z")
	require.ErrorContains(t, err, "must be a postgres:// or postgresql:// URL")
}
