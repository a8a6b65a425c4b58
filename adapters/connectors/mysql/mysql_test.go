package mysql_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors"
	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/mysql"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

func TestSourceTypesAndRoundTrip(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	const def = `(ti TINYINT, i INT, bi BIGINT, ub BIGINT UNSIGNED, f FLOAT, dbl DOUBLE, dc DECIMAL(30,5),
		vc VARCHAR(20), tx TEXT, bl BLOB, vb VARBINARY(8), dt DATETIME(6), ts TIMESTAMP(3) NULL, da DATE, bo BOOLEAN, j JSON)`
	d.exec(t, "CREATE TABLE src "+def)
	d.exec(t, "CREATE TABLE dst "+def)
	d.exec(t, `INSERT INTO src VALUES (-1, 70000, 9007199254740993, 18446744073709551615, 1.5, 0.1, 123456789012345678901234.5,
		'tab\tq"', 'multi\nline', X'00FF', X'0102', '2025-03-01 08:00:00.123456', '2025-03-01 08:00:00.5', '2025-03-02', TRUE,
		'{"a": [1, "x"], "big": 9007199254740993}'),
		(NULL, NULL, NULL, NULL, NULL, NULL, NULL, '', NULL, NULL, NULL, NULL, NULL, NULL, FALSE, NULL)`)
	pages := read(t, execute.ReadRequest{Config: map[string]any{"connection_url": d.url, "query": "SELECT * FROM src ORDER BY bo DESC"}})
	require.Len(t, pages, 1)
	row := pages[0].Rows[0]
	require.Equal(t, []any{
		int64(-1), int64(70000), int64(9007199254740993), "18446744073709551615", 1.5, 0.1, "123456789012345678901234.50000",
		"tab\tq\"", "multi\nline", []byte{0, 0xff}, []byte{1, 2},
		time.Date(2025, 3, 1, 8, 0, 0, 123456000, time.UTC), time.Date(2025, 3, 1, 8, 0, 0, 500000000, time.UTC),
		time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC), int64(1),
	}, row[:15])
	// MariaDB stores JSON as LONGTEXT, so it reads as text there; MySQL decodes it.
	switch j := row[15].(type) {
	case string:
		require.JSONEq(t, `{"a": [1, "x"], "big": 9007199254740993}`, j)
	default:
		require.Equal(t, map[string]any{"a": []any{int64(1), "x"}, "big": int64(9007199254740993)}, j)
	}
	require.Equal(t, []any{nil, "", int64(0)}, []any{pages[0].Rows[1][0], pages[0].Rows[1][7], pages[0].Rows[1][14]})

	require.NoError(t, sinkRun(t, map[string]any{"connection_url": d.url, "table_name": "dst"}, pages...))
	require.Equal(t, d.rows(t, "SELECT * FROM src ORDER BY bo"), d.rows(t, "SELECT * FROM dst ORDER BY bo"),
		"every value survives a read and a write")
}

func TestIncrementalTieAtPageEdge(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE ev (id INT PRIMARY KEY, c DATETIME(6))")
	d.exec(t, `INSERT INTO ev VALUES (1, '2025-01-01 00:00:01'), (2, '2025-01-01 00:00:02'), (3, '2025-01-01 00:00:03'),
		(4, '2025-01-01 00:00:03'), (5, '2025-01-01 00:00:03'), (6, '2025-01-01 00:00:04')`)
	req := func(after *state.Bookmark, exact bool) execute.ReadRequest {
		return execute.ReadRequest{BatchSize: 3, Config: map[string]any{"connection_url": d.url, "query": "SELECT id, c FROM ev"},
			Incremental: &execute.Incremental{Cursor: "c", After: after, Exact: exact}}
	}
	pages := read(t, req(nil, false))
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6}, ids(pages))
	require.Equal(t, &state.Bookmark{Cursor: "c", Value: "2025-01-01T00:00:02Z"}, pages[0].Bookmark,
		"rows 4 and 5 share the page's last cursor value, so it may only promise the one before")
	require.Equal(t, []int64{3, 4, 5, 6}, ids(read(t, req(pages[0].Bookmark, false))), "nothing is skipped on resume")

	exact := read(t, req(nil, true))
	require.Len(t, exact[0].Rows, 5)
	require.Equal(t, "2025-01-01T00:00:03Z", exact[0].Bookmark.Value)
	require.Equal(t, []int64{6}, ids(read(t, req(exact[0].Bookmark, true))))
}

func TestErrorsHideThePassword(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	u, err := url.Parse(d.url)
	require.NoError(t, err)
	u.User = url.UserPassword("nobody_here", "Sup3rS3cretPw")
	err = readErr(execute.ReadRequest{Config: map[string]any{"connection_url": u.String(), "query": "SELECT 1"}})
	require.ErrorContains(t, err, "Access denied for user 'nobody_here'")
	require.NotContains(t, err.Error(), "Sup3rS3cretPw")

	err = readErr(execute.ReadRequest{Config: map[string]any{"connection_url": d.url, "query": "SELECT nope FROM dual"}})
	require.ErrorContains(t, err, "mysql: query: Error 1054 (42S22): Unknown column 'nope'")

	err = readErr(execute.ReadRequest{Config: map[string]any{"connection_url": d.url, "query": "SELECT 1 AS a"},
		Incremental: &execute.Incremental{Cursor: "b"}})
	require.ErrorContains(t, err, `is the cursor column "b" a column of the query?`)
}

func TestSinkRefusals(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE t (id BIGINT PRIMARY KEY, amount INT, name TEXT)")
	d.exec(t, "CREATE TABLE nokey (id BIGINT, name TEXT)")
	base := func(kv ...any) map[string]any {
		return conntest.With(map[string]any{"connection_url": d.url, "table_name": "t"}, kv...)
	}
	cases := []conntest.Refusal{
		{Name: "missing table", Config: base("table_name", "orders"), Page: nil,
			Want: `mysql: table "orders" does not exist; create it or set create_table: true`},
		{Name: "unknown columns", Config: base(), Page: page([]string{"id", "extra", "more"}, []any{int64(1), "x", "y"}),
			Want: `the table has no columns "extra", "more"`},
		{Name: "type mismatch names the column", Config: base(), Page: page([]string{"id", "amount"}, []any{int64(1), "a lot"}),
			Want: "`t`.`amount` at row 1"},
		{Name: "upsert without the key column", Config: base("write_mode", "upsert", "key", []any{"id"}), Page: page([]string{"name"}, []any{"x"}),
			Want: `key column "id" is not among the page's columns [name]`},
		{Name: "upsert without a unique index", Config: base("table_name", "nokey", "write_mode", "upsert", "key", []any{"id"}), Page: nil,
			Want: `upsert needs a PRIMARY KEY or UNIQUE index on (id)`},
		{Name: "NaN", Config: base(), Page: page([]string{"id", "amount"}, []any{int64(1), nanValue()}),
			Want: `column "amount": NaN has no MySQL form`},
	}
	conntest.Refusals(t, sinkRun, cases)
	require.Empty(t, d.rows(t, "SELECT * FROM t"))
}

func TestUpsertIdempotentWithDuplicateKeysInAPage(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT, extra TEXT DEFAULT 'kept')")
	cfg := map[string]any{"connection_url": d.url, "table_name": "t", "write_mode": "upsert", "key": []any{"id"}}
	p := page([]string{"id", "name"}, []any{int64(1), "first"}, []any{int64(2), "b"}, []any{int64(1), "last"})
	require.NoError(t, sinkRun(t, cfg, p))
	require.NoError(t, sinkRun(t, cfg, p))
	require.Equal(t, [][]any{{int64(1), "last", "kept"}, {int64(2), "b", "kept"}}, d.rows(t, "SELECT * FROM t ORDER BY id"))
	require.NoError(t, sinkRun(t, cfg, page([]string{"id"}, []any{int64(3)}, []any{int64(3)})))
	require.Len(t, d.rows(t, "SELECT * FROM t"), 3)
}

func fenced(t *testing.T, cfg map[string]any) execute.FencedSink {
	t.Helper()
	return conntest.Fenced(t, mysql.New(), execute.WriteRequest{Config: cfg})
}

func numbered(from, to int64) *execute.Page {
	return conntest.Numbered(from, to)
}

func TestOlderWriterIsFenced(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE t (id BIGINT)")
	cfg := map[string]any{"connection_url": d.url, "table_name": "t"}
	ctx := context.Background()
	a := fenced(t, cfg)
	wm, err := a.Fence(ctx, "_/orders")
	require.NoError(t, err)
	require.Equal(t, execute.Watermark{Epoch: 1}, wm)
	require.NoError(t, a.WriteAt(ctx, numbered(1, 3), execute.Position{Rows: 3}))
	require.NoError(t, a.WriteAt(ctx, numbered(4, 4), execute.Position{Rows: 3}), "an unchanged position still matches the row")

	b := fenced(t, cfg)
	wm, err = b.Fence(ctx, "_/orders")
	require.NoError(t, err)
	require.Equal(t, execute.Watermark{Epoch: 2, Position: execute.Position{Rows: 3}}, wm)

	err = a.WriteAt(ctx, numbered(5, 6), execute.Position{Rows: 6})
	require.ErrorIs(t, err, run.ErrLeaseLost)
	require.NoError(t, a.Abort(ctx))
	require.Equal(t, [][]any{{int64(4)}}, d.rows(t, "SELECT count(*) FROM t"), "the refused page left nothing")

	mark := &state.Bookmark{Cursor: "id", Value: int64(9)}
	require.NoError(t, b.CommitAt(ctx, execute.Position{Bookmark: mark}))
	require.Equal(t, [][]any{{int64(2), `{"v":2,"cursor":"id","value":9}`, int64(0)}},
		d.rows(t, "SELECT epoch, bookmark, rows_after FROM sluice_watermarks"))
}

func TestExactlyOnceNeedsATransactionalTable(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE t (id BIGINT) ENGINE=MyISAM")
	s := fenced(t, map[string]any{"connection_url": d.url, "table_name": "t"})
	defer s.Abort(context.Background())
	_, err := s.Fence(context.Background(), "k")
	require.ErrorContains(t, err, "delivery exactly_once needs a transactional table, but the engine is MyISAM")
}

func TestExactlyOnceResumeAfterStop(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE src (id INT PRIMARY KEY, c INT)")
	for i := 1; i <= 60; i++ {
		d.exec(t, "INSERT INTO src VALUES (?, ?)", i, i/4)
	}
	d.exec(t, "CREATE TABLE dst (id INT, c INT)")
	d.exec(t, "CREATE TABLE sluice_watermarks (state_key VARCHAR(255) PRIMARY KEY, epoch BIGINT NOT NULL, bookmark TEXT, rows_after BIGINT NOT NULL DEFAULT 0, updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))")
	ex := &execute.Executor{Registry: connectors.New(mysql.New())}
	for _, incremental := range []bool{false, true} {
		d.exec(t, "DELETE FROM dst")
		d.exec(t, "DELETE FROM sluice_watermarks")
		for _, stopAt := range []int64{2, 5, 0} {
			cfg := &pipeline.Config{Version: 1, Name: "m", Delivery: pipeline.ExactlyOnce,
				Replication: pipeline.Replication{Type: pipeline.Full},
				Source:      pipeline.Connector{Type: "mysql", Config: map[string]any{"connection_url": d.url, "query": "SELECT * FROM src ORDER BY id", "batch_size": int64(7)}},
				Sink:        pipeline.Connector{Type: "mysql", Config: map[string]any{"connection_url": d.url, "table_name": "dst"}}}
			if incremental {
				cfg.Replication = pipeline.Replication{Type: pipeline.Incremental, Cursor: "c"}
			}
			ctx, cancel := context.WithCancel(context.Background())
			_, err := ex.Run(ctx, execute.Job{Config: cfg, StateKey: "_/m", Progress: func(s execute.Stats) {
				if s.Pages == stopAt {
					cancel()
				}
			}})
			cancel()
			if stopAt == 0 {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, context.Canceled)
			}
		}
		require.Equal(t, [][]any{{int64(60), int64(60)}}, d.rows(t, "SELECT count(*), count(DISTINCT id) FROM dst"),
			"incremental=%v: every row exactly once", incremental)
	}
}

func TestWatermarkTableOfAnEarlierVersionIsUpgraded(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t (id BIGINT) ENGINE=InnoDB`)
	d.exec(t, `CREATE TABLE sluice_watermarks (state_key VARCHAR(255) NOT NULL PRIMARY KEY, epoch BIGINT NOT NULL,
	bookmark TEXT NULL, rows_after BIGINT NOT NULL DEFAULT 0,
	updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB`)
	d.exec(t, `INSERT INTO sluice_watermarks (state_key, epoch, rows_after) VALUES ('_/old', 3, 7)`)
	conntest.WatermarkUpgrade(t, func(t *testing.T) execute.FencedSink {
		return fenced(t, map[string]any{"connection_url": d.url, "table_name": "t"})
	})
}
