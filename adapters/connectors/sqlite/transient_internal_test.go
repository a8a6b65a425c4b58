package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/application/execute"
)

// busyDB creates the database with table t and holds its write lock from another
// connection; release ends that transaction.
func busyDB(t *testing.T) (path string, release func()) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "x.db")
	holder, err := sql.Open(sqliteshim.ShimName, path+"?_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	t.Cleanup(func() { holder.Close() })
	_, err = holder.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	require.NoError(t, err)
	conn, err := holder.Conn(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)
	return path, func() {
		_, err := conn.ExecContext(ctx, "ROLLBACK")
		require.NoError(t, err)
	}
}

func busySink(t *testing.T, path string, attempts int64) *sink {
	t.Helper()
	snk, err := New().OpenSink(context.Background(), execute.WriteRequest{Config: map[string]any{
		"connection_url": "sqlite:" + path, "table_name": "t",
		"retry": map[string]any{"attempts": attempts, "initial_secs": 0.001, "max_secs": 0.01},
	}, Bookmarks: true})
	require.NoError(t, err)
	s := snk.(*sink)
	// The sink's one connection gives up on the lock at once instead of after 5 s.
	_, err = s.DB.ExecContext(context.Background(), "PRAGMA busy_timeout = 1")
	require.NoError(t, err)
	return s
}

var page = &execute.Page{Columns: []string{"id", "v"}, Rows: [][]any{{int64(1), "a"}}}

// A page that finds the database locked by another writer is written again once the
// lock is gone.
func TestBusyDatabaseRetriesThePage(t *testing.T) {
	t.Parallel()
	path, release := busyDB(t)
	s := busySink(t, path, 5)
	retries := 0
	s.retry.OnRetry = func(int, time.Duration, error) {
		retries++
		if retries == 1 {
			release() // the other writer finishes while the sink waits to try again
		}
	}
	require.NoError(t, s.Write(context.Background(), page))
	require.NoError(t, s.Commit(context.Background()))
	require.Equal(t, 1, retries)
	check, err := sql.Open(sqliteshim.ShimName, path)
	require.NoError(t, err)
	defer check.Close()
	var n int
	require.NoError(t, check.QueryRowContext(context.Background(), "SELECT count(*) FROM t").Scan(&n))
	require.Equal(t, 1, n)
}

func TestBusyDatabaseGivesUpTransient(t *testing.T) {
	t.Parallel()
	path, _ := busyDB(t)
	s := busySink(t, path, 2)
	retries := 0
	s.retry.OnRetry = func(int, time.Duration, error) { retries++ }
	err := s.Write(context.Background(), page)
	require.Error(t, err)
	require.True(t, execute.IsTransient(err), "%v", err)
	require.Equal(t, 1, retries, "two attempts")
	require.NoError(t, s.Abort(context.Background()))
}
