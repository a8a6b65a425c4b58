package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
)

// createRace holds another session's CREATE TABLE of t open (uncommitted), starts a sink
// that creates t from its first page, waits until that sink's CREATE waits on the other
// transaction, then commits it: the moment the issue describes, when the sink's
// CREATE TABLE IF NOT EXISTS used to fail on pg_type's unique index (SQLSTATE 23505).
func createRace(t *testing.T, d *db, otherDDL string, pages ...*execute.Page) error {
	t.Helper()
	ctx := context.Background()
	other, err := pgx.Connect(ctx, d.url)
	require.NoError(t, err)
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, otherDDL)
	require.NoError(t, err)
	var xid string
	require.NoError(t, tx.QueryRow(ctx, "SELECT (txid_current() % 4294967296)::text").Scan(&xid))

	done := make(chan error, 1)
	go func() {
		done <- sinkRun(t, map[string]any{"connection_url": d.url, "table_name": "t", "create_table": true}, pages...)
	}()
	require.Eventually(t, func() bool {
		var waiting int
		require.NoError(t, d.conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks
WHERE locktype = 'transactionid' AND NOT granted AND transactionid::text = $1`, xid).Scan(&waiting))
		return waiting > 0
	}, 20*time.Second, 10*time.Millisecond, "the sink's CREATE waits for the other creator")
	require.NoError(t, tx.Commit(ctx))
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the sink did not finish after the other creator committed")
		return nil
	}
}

func TestCreateTableRacingAnotherCreatorSucceeds(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	err := createRace(t, d, `CREATE TABLE t (id bigint, extra text)`, numbered(1, 3), numbered(4, 5))
	require.NoError(t, err, "a table created a moment ago by someone else is the table to write into")
	require.Equal(t, [][]any{{int64(5), int64(0)}}, d.rows(t, "SELECT count(*), count(extra) FROM t"))
}

func TestCreateTableRacingAConflictingSchemaFailsClearly(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	err := createRace(t, d, `CREATE TABLE t (other text)`, numbered(1, 3))
	require.Error(t, err)
	require.ErrorContains(t, err, `postgres: table "t": the table has no column "id"; add them to the table or leave them out of the source`)
	require.Equal(t, [][]any{{int64(0)}}, d.rows(t, "SELECT count(*) FROM t"))
}
