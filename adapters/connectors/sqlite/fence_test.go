package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/sqlite"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

func fencedSink(t *testing.T, dir string, cfg map[string]any) execute.FencedSink {
	t.Helper()
	return conntest.Fenced(t, sqlite.New(), execute.WriteRequest{Config: cfg, BaseDir: dir})
}

func TestOlderWriterIsFenced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := map[string]any{"connection_url": "o.db", "table_name": "t", "create_table": true}
	ctx := context.Background()
	ids := func(from, to int64) *execute.Page {
		p := &execute.Page{Columns: []string{"id"}}
		for i := from; i <= to; i++ {
			p.Rows = append(p.Rows, []any{i})
		}
		return p
	}
	a := fencedSink(t, dir, cfg)
	wm, err := a.Fence(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, execute.Watermark{Epoch: 1}, wm)
	require.NoError(t, a.WriteAt(ctx, ids(1, 2), execute.Position{Rows: 2}))

	b := fencedSink(t, dir, cfg)
	wm, err = b.Fence(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, execute.Watermark{Epoch: 2, Position: execute.Position{Rows: 2}}, wm)

	require.ErrorIs(t, a.WriteAt(ctx, ids(3, 4), execute.Position{Rows: 4}), run.ErrLeaseLost)
	require.NoError(t, a.Abort(ctx))
	db := openDB(t, filepath.Join(dir, "o.db"))
	require.Equal(t, [][]any{{int64(2)}}, query(t, db, "SELECT count(*) FROM t"), "the refused page left nothing")

	mark := &state.Bookmark{Cursor: "id", Value: int64(2)}
	require.NoError(t, b.CommitAt(ctx, execute.Position{Bookmark: mark}))
	require.Equal(t, [][]any{{int64(2), `{"v":2,"cursor":"id","value":2}`, int64(0)}},
		query(t, db, "SELECT epoch, bookmark, rows_after FROM sluice_watermarks WHERE state_key = 'k'"))

	// Overwrite: the position moves with the run's one transaction.
	ow := map[string]any{"connection_url": "o.db", "table_name": "t", "write_mode": "overwrite"}
	c := fencedSink(t, dir, ow)
	_, err = c.Fence(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, c.WriteAt(ctx, ids(7, 7), execute.Position{Rows: 1}))
	require.NoError(t, c.CommitAt(ctx, execute.Position{Rows: 0}))
	require.Equal(t, [][]any{{int64(7)}}, query(t, db, "SELECT id FROM t"))
}

func TestWatermarkTableOfAnEarlierVersionIsUpgraded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "u.db"))
	exec(t, db, `CREATE TABLE t (id INTEGER)`)
	exec(t, db, `CREATE TABLE sluice_watermarks (state_key TEXT PRIMARY KEY, epoch INTEGER NOT NULL, bookmark TEXT,
	rows_after INTEGER NOT NULL DEFAULT 0, updated_at TEXT NOT NULL)`)
	exec(t, db, `INSERT INTO sluice_watermarks (state_key, epoch, rows_after, updated_at) VALUES ('_/old', 3, 7, 'then')`)
	conntest.WatermarkUpgrade(t, func(t *testing.T) execute.FencedSink {
		return fencedSink(t, dir, map[string]any{"connection_url": "u.db", "table_name": "t"})
	})
}
