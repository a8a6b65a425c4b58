package sqlsink_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlsink"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open(sqliteshim.ShimName, filepath.Join(t.TempDir(), "x.db"))
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE TABLE t (id INTEGER)`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO t VALUES (1), (2)`)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE wm (state_key TEXT PRIMARY KEY, epoch INTEGER, bookmark TEXT, rows_after INTEGER, completed_by TEXT, updated_at TEXT)`)
	require.NoError(t, err)
	return db
}

func count(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(q).Scan(&n))
	return n
}

func ending(advance func(context.Context, sqlsink.Execer, execute.Position) error) sqlsink.Ending {
	return sqlsink.Ending{Name: "db", Table: "t", Empty: "DELETE FROM t", Advance: advance,
		Explain: func(err error) error { return errors.New("explained: " + err.Error()) }}
}

func TestDurability(t *testing.T) {
	t.Parallel()
	require.Equal(t, execute.AtEnd, (&sqlsink.Run{Mode: pipeline.Overwrite}).Durability())
	require.Equal(t, execute.PerPage, (&sqlsink.Run{Mode: pipeline.Append}).Durability())
	require.Equal(t, execute.PerPage, (&sqlsink.Run{Mode: pipeline.Upsert}).Durability())
}

func TestOverwriteWithoutPagesEmptiesTheTable(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	r := &sqlsink.Run{DB: db, Mode: pipeline.Overwrite}
	probe, err := sql.Open(sqliteshim.ShimName, dbPath(t, db))
	require.NoError(t, err)
	defer probe.Close()
	require.NoError(t, r.Finish(context.Background(), nil, ending(nil)))
	require.Equal(t, 0, count(t, probe, "SELECT count(*) FROM t"))
	require.EqualError(t, r.Finish(context.Background(), nil, ending(nil)), `db: table "t": already committed or aborted`)
	require.NoError(t, r.Abandon("db", "t", func(err error) error { return err }))
}

func dbPath(t *testing.T, db *sql.DB) string {
	t.Helper()
	var seq int
	var name, file string
	require.NoError(t, db.QueryRow("PRAGMA database_list").Scan(&seq, &name, &file))
	return file
}

func TestOverwriteAfterAFailedPageDoesNotCommit(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	path := dbPath(t, db)
	r := &sqlsink.Run{DB: db, Mode: pipeline.Overwrite}
	require.NoError(t, r.BeginOverwrite(context.Background(), "DELETE FROM t"))
	r.Failed = errors.New("page 3 broke")
	err := r.Finish(context.Background(), nil, ending(nil))
	require.EqualError(t, err, "db: not committing the overwrite after a failed write: page 3 broke")
	probe, err := sql.Open(sqliteshim.ShimName, path)
	require.NoError(t, err)
	defer probe.Close()
	require.Equal(t, 2, count(t, probe, "SELECT count(*) FROM t"))
}

func TestAbandonRollsBack(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	path := dbPath(t, db)
	r := &sqlsink.Run{DB: db, Mode: pipeline.Overwrite}
	require.NoError(t, r.BeginOverwrite(context.Background(), "DELETE FROM t"))
	require.NoError(t, r.Abandon("db", "t", func(err error) error { return err }))
	require.NoError(t, r.Abandon("db", "t", func(err error) error { return err }), "a second abort is a no-op")
	probe, err := sql.Open(sqliteshim.ShimName, path)
	require.NoError(t, err)
	defer probe.Close()
	require.Equal(t, 2, count(t, probe, "SELECT count(*) FROM t"))
}

func TestFinishAdvancesAFencedWatermark(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	_, err := db.Exec(`INSERT INTO wm (state_key, epoch) VALUES ('k', 2)`)
	require.NoError(t, err)
	f := sqlsink.Fence{Table: "wm", Key: "k"}
	w, err := f.Taken(2, sql.NullString{}, 0, sql.NullString{})
	require.NoError(t, err)
	require.Equal(t, int64(2), w.Epoch)
	advance := func(ctx context.Context, q sqlsink.Execer, pos execute.Position) error {
		return f.Advance(ctx, q, "?", []any{"now"}, pos)
	}
	path := dbPath(t, db)
	r := &sqlsink.Run{DB: db, Mode: pipeline.Append}
	pos := execute.Position{Bookmark: &state.Bookmark{Cursor: "id", Value: int64(9)}, Rows: 3, CompletedBy: "run-1"}
	require.NoError(t, r.Finish(context.Background(), &pos, ending(advance)))
	probe, err := sql.Open(sqliteshim.ShimName, path)
	require.NoError(t, err)
	defer probe.Close()
	var rows int64
	var at, by string
	require.NoError(t, probe.QueryRow(`SELECT rows_after, updated_at, completed_by FROM wm WHERE state_key = 'k'`).Scan(&rows, &at, &by))
	require.Equal(t, int64(3), rows)
	require.Equal(t, "now", at)
	require.Equal(t, "run-1", by)
}

func TestAdvanceRefusals(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	defer db.Close()
	_, err := db.Exec(`INSERT INTO wm (state_key, epoch) VALUES ('k', 5)`)
	require.NoError(t, err)
	never := sqlsink.Fence{Table: "wm", Key: "k"}
	require.EqualError(t, never.Advance(context.Background(), db, "?", []any{"now"}, execute.Position{}), "the watermark was never fenced")

	stale := sqlsink.Fence{Table: "wm", Key: "k", Epoch: 4}
	err = stale.Advance(context.Background(), db, "?", []any{"now"}, execute.Position{})
	require.ErrorIs(t, err, run.ErrLeaseLost)
	require.ErrorContains(t, err, `watermark "k": epoch 4 was taken by a newer writer`)

	broken := sqlsink.Fence{Table: "missing", Key: "k", Epoch: 5}
	require.ErrorContains(t, broken.Advance(context.Background(), db, "?", []any{"now"}, execute.Position{}), "watermark: ")

	_, err = (&sqlsink.Fence{}).Taken(1, sql.NullString{Valid: true, String: "not a bookmark"}, 0, sql.NullString{})
	require.Error(t, err)
}
