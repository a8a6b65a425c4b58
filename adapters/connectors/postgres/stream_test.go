package postgres_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors"
	"github.com/sluicehq/sluice/adapters/connectors/postgres"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
)

// A passed-through append streams every page into one COPY in one transaction: all rows
// or none.
func TestPassthroughAppendIsOneCopy(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE src AS SELECT g AS id, CASE WHEN g = 950 THEN 'oops' ELSE g::text END AS n FROM generate_series(1, 1000) g`)
	d.exec(t, `CREATE TABLE dst (id int, n int)`)
	d.exec(t, `INSERT INTO dst VALUES (0, 0)`)
	ex := &execute.Executor{Registry: connectors.New(postgres.New())}
	src := map[string]any{"connection_url": d.url, "query": "SELECT * FROM src ORDER BY id", "batch_size": int64(100)}

	// Row 950 does not fit the integer column: nothing of the run stays.
	log := &logged{}
	j := job(src, map[string]any{"connection_url": d.url, "table_name": "dst"})
	j.Log = slog.New(log)
	_, err := ex.Run(context.Background(), j)
	require.True(t, log.has("pass through"))
	var f *execute.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, run.CodePipelineError, f.Code)
	require.ErrorContains(t, err, `invalid input syntax for type integer: "oops"`)
	require.ErrorContains(t, err, `COPY dst, line 950, column n: "oops"`)
	require.Equal(t, [][]any{{int64(1)}}, d.rows(t, "SELECT count(*) FROM dst"), "the failed run left no row behind")

	// A stop leaves nothing either.
	ctx, cancel := context.WithCancel(context.Background())
	j = job(src, map[string]any{"connection_url": d.url, "table_name": "copy", "create_table": true})
	j.Progress = func(s execute.Stats) {
		if s.Pages == 3 {
			cancel()
		}
	}
	_, err = ex.Run(ctx, j)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, d.tableExists(t, "copy"), "even the table created for the run is rolled back")

	stats, err := ex.Run(context.Background(), job(src, map[string]any{"connection_url": d.url, "table_name": "copy", "create_table": true}))
	require.NoError(t, err)
	require.Equal(t, int64(1000), stats.RowsWritten)
	require.Equal(t, int64(10), stats.Pages)
	require.Equal(t, d.rows(t, "SELECT s::text FROM src s ORDER BY id"), d.rows(t, "SELECT s::text FROM copy s ORDER BY id"))

	// Overwrite streams too, replacing the rows in the same transaction.
	_, err = ex.Run(context.Background(), job(map[string]any{"connection_url": d.url, "query": "SELECT * FROM src WHERE id <= 10"},
		map[string]any{"connection_url": d.url, "table_name": "copy", "write_mode": "overwrite"}))
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(10)}}, d.rows(t, "SELECT count(*) FROM copy"))
}
