package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/sqlite"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

func sinkRun(t *testing.T, dir string, cfg map[string]any, pages ...*execute.Page) error {
	t.Helper()
	return conntest.SinkRun(t, sqlite.New(), execute.WriteRequest{Config: cfg, BaseDir: dir}, pages...)
}

func page(cols []string, rows ...[]any) *execute.Page {
	return conntest.Page(cols, rows...)
}

func TestSinkMissingTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	err := sinkRun(t, dir, map[string]any{"connection_url": "o.db", "table_name": "orders"})
	require.EqualError(t, err, `sqlite: table "orders" does not exist in `+filepath.Join(dir, "o.db")+`; create it or set create_table: true`)
}

func TestSinkCreateTableTypesAndKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	require.NoError(t, sinkRun(t, dir,
		map[string]any{"connection_url": "o.db", "table_name": `we"ird`, "create_table": true, "key": []any{"my id"}, "write_mode": "upsert"},
		page([]string{"my id", "n", "f", "b", "t", "blob", "s", "later", "m"},
			[]any{int64(1), nil, 1.5, true, at, []byte{9}, "x", nil, map[string]any{"a": int64(1)}},
			[]any{int64(2), int64(5), 2.0, false, at, []byte{7}, "y", "z", []any{"q"}})))
	db := openDB(t, filepath.Join(dir, "o.db"))
	types := query(t, db, `SELECT name, type, pk FROM pragma_table_info('we"ird') ORDER BY cid`)
	require.Equal(t, [][]any{
		{"my id", "INTEGER", int64(1)}, {"n", "INTEGER", int64(0)}, {"f", "REAL", int64(0)}, {"b", "INTEGER", int64(0)},
		{"t", "TEXT", int64(0)}, {"blob", "BLOB", int64(0)}, {"s", "TEXT", int64(0)}, {"later", "TEXT", int64(0)}, {"m", "TEXT", int64(0)},
	}, types)
	require.Equal(t, [][]any{
		{int64(1), nil, 1.5, int64(1), "2025-01-02T03:04:05.000000006Z", []byte{9}, "x", nil, `{"a":1}`},
		{int64(2), int64(5), 2.0, int64(0), "2025-01-02T03:04:05.000000006Z", []byte{7}, "y", "z", `["q"]`},
	}, query(t, db, `SELECT * FROM "we""ird" ORDER BY 1`))
}

func TestSinkLargePagesAreChunked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cols := make([]string, 300) // wider than one statement's parameter budget
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d", i)
	}
	p := &execute.Page{Columns: cols}
	for i := range 123 { // not a multiple of the rows per statement
		r := make([]any, len(cols))
		for j := range r {
			r[j] = int64(i*1000 + j)
		}
		p.Rows = append(p.Rows, r)
	}
	require.NoError(t, sinkRun(t, dir, map[string]any{"connection_url": "o.db", "table_name": "t", "create_table": true}, p))
	db := openDB(t, filepath.Join(dir, "o.db"))
	require.Equal(t, [][]any{{int64(123), int64(122299), int64(122000)}}, query(t, db, `SELECT count(*), max(c299), max(c0) FROM t`))

	// Narrow rows: many per statement, plus a shorter last statement.
	narrow := &execute.Page{Columns: cols[:3]}
	for i := range 1234 {
		narrow.Rows = append(narrow.Rows, []any{int64(i), int64(i), int64(i)})
	}
	require.NoError(t, sinkRun(t, dir, map[string]any{"connection_url": "o.db", "table_name": "t"}, narrow))
	require.Equal(t, [][]any{{int64(1357), int64(1234), int64(1233)}}, query(t, db, `SELECT count(*), count(*) FILTER (WHERE c3 IS NULL), max(c1) FILTER (WHERE c3 IS NULL) FROM t`))
}

func TestSinkUnknownColumn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "o.db"))
	exec(t, db, `CREATE TABLE t (id INTEGER)`)
	err := sinkRun(t, dir, map[string]any{"connection_url": "o.db", "table_name": "t"},
		page([]string{"ID", "extra"}, []any{int64(1), "x"}))
	require.ErrorContains(t, err, `sqlite: table "t": the table has no column "extra"`)
	require.Empty(t, query(t, db, `SELECT * FROM t`))
}

func TestSinkUpsertWithoutUniqueIndexExplains(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "o.db"))
	exec(t, db, `CREATE TABLE t (id INTEGER, v TEXT)`)
	err := sinkRun(t, dir, map[string]any{"connection_url": "o.db", "table_name": "t", "write_mode": "upsert", "key": []any{"id"}},
		page([]string{"id", "v"}, []any{int64(1), "x"}))
	require.ErrorContains(t, err, `upsert needs a PRIMARY KEY or UNIQUE index on [id]`)
}

func TestSinkUpsertIdempotentAndKeyOnlyPages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := map[string]any{"connection_url": "o.db", "table_name": "t", "write_mode": "upsert", "key": []any{"a", "b"}, "create_table": true}
	p := page([]string{"a", "b", "v"}, []any{int64(1), "x", "one"}, []any{int64(1), "y", "two"}, []any{int64(1), "x", "three"})
	for range 2 {
		require.NoError(t, sinkRun(t, dir, cfg, p))
	}
	require.NoError(t, sinkRun(t, dir, cfg, page([]string{"a", "b"}, []any{int64(2), "z"}, []any{int64(1), "x"})))
	db := openDB(t, filepath.Join(dir, "o.db"))
	require.Equal(t, [][]any{{int64(1), "x", "three"}, {int64(1), "y", "two"}, {int64(2), "z", nil}},
		query(t, db, `SELECT * FROM t ORDER BY a, b`), "within a page the last row of a key wins; key-only pages insert or do nothing")
}

func TestSinkDeleteMatchesNullKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "o.db"))
	exec(t, db, `CREATE TABLE t (k TEXT, v TEXT)`)
	exec(t, db, `INSERT INTO t VALUES ('a', '1'), (NULL, '2'), ('b', '3')`)
	require.NoError(t, sinkRun(t, dir, map[string]any{"connection_url": "o.db", "table_name": "t", "write_mode": "delete", "key": "k"},
		page([]string{"k"}, []any{nil}, []any{"a"}, []any{"zzz"})))
	require.Equal(t, [][]any{{"b", "3"}}, query(t, db, `SELECT * FROM t`))

	err := sinkRun(t, dir, map[string]any{"connection_url": "o.db", "table_name": "t", "write_mode": "delete", "key": "k"},
		page([]string{"v"}, []any{"3"}))
	require.ErrorContains(t, err, `key column "k" is not among the page's columns [v]`)
}

func TestSinkOverwrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "o.db"))
	exec(t, db, `CREATE TABLE t (id INTEGER)`)
	exec(t, db, `INSERT INTO t VALUES (1), (2)`)
	cfg := map[string]any{"connection_url": "o.db", "table_name": "t", "write_mode": "overwrite"}

	// Until Commit, readers still see the old rows.
	s, err := sqlite.New().OpenSink(context.Background(), execute.WriteRequest{Config: cfg, BaseDir: dir})
	require.NoError(t, err)
	require.NoError(t, s.Write(context.Background(), page([]string{"id"}, []any{int64(9)})))
	require.Equal(t, [][]any{{int64(1)}, {int64(2)}}, query(t, db, `SELECT * FROM t ORDER BY id`))
	require.NoError(t, s.Commit(context.Background()))
	require.Equal(t, [][]any{{int64(9)}}, query(t, db, `SELECT * FROM t`))

	// A failed write dooms the whole overwrite, even if Commit is called.
	s, err = sqlite.New().OpenSink(context.Background(), execute.WriteRequest{Config: cfg, BaseDir: dir})
	require.NoError(t, err)
	require.NoError(t, s.Write(context.Background(), page([]string{"id"}, []any{int64(10)})))
	require.Error(t, s.Write(context.Background(), page([]string{"nope"}, []any{int64(11)})))
	require.Error(t, s.Write(context.Background(), page([]string{"id"}, []any{int64(12)})), "the sink stays failed")
	require.ErrorContains(t, s.Commit(context.Background()), "not committing the overwrite after a failed write")
	require.Equal(t, [][]any{{int64(9)}}, query(t, db, `SELECT * FROM t`))

	// An overwrite with no pages empties the table.
	require.NoError(t, sinkRun(t, dir, cfg))
	require.Empty(t, query(t, db, `SELECT * FROM t`))
}

func TestSinkRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"no table", map[string]any{"connection_url": "o.db"}, `"table_name": a table name is required`},
		{"upsert without key", map[string]any{"connection_url": "o.db", "table_name": "t", "write_mode": "upsert"}, "write_mode upsert needs key"},
		{"delete without key", map[string]any{"connection_url": "o.db", "table_name": "t", "write_mode": "delete", "key": []any{}}, "write_mode delete needs key"},
		{"unknown mode", map[string]any{"connection_url": "o.db", "table_name": "t", "write_mode": "merge"}, `unknown write_mode "merge"`},
		{"bad url", map[string]any{"connection_url": "mysql://root:pw@h/db", "table_name": "t"}, "connection_url must be"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := sqlite.New().OpenSink(context.Background(), execute.WriteRequest{Config: tc.cfg, BaseDir: dir})
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "sqlite: ")
			require.NotContains(t, err.Error(), "pw@")
		})
	}
}

func TestSpecCheck(t *testing.T) {
	t.Parallel()
	spec := sqlite.New().Spec()
	const p = "pipeline.sink.config"
	require.Empty(t, spec.Check(pipeline.RoleSink, map[string]any{"connection_url": "a.db", "table_name": "t", "write_mode": "upsert", "key": []string{"id"}}, p))
	errs := spec.Check(pipeline.RoleSink, map[string]any{"connection_url": "a.db", "table_name": "t", "write_mode": "upsert"}, p)
	require.Len(t, errs, 1)
	require.Equal(t, p+".key", errs[0].Path)
	require.Contains(t, errs[0].Message, "required when write_mode is upsert")
	errs = spec.Check(pipeline.RoleSink, map[string]any{"connection_url": "a.db", "table_name": " "}, p)
	require.Len(t, errs, 1)
	require.Equal(t, p+".table_name", errs[0].Path)
	errs = spec.Check(pipeline.RoleSource, map[string]any{"connection_url": "sqlite::memory:", "query": "SELECT 1"}, "pipeline.source.config")
	require.Len(t, errs, 1)
	require.Equal(t, "pipeline.source.config.connection_url", errs[0].Path)
	require.Empty(t, spec.Check(pipeline.RoleSource, map[string]any{"connection_url": "a.db", "query": "SELECT 1", "write_mode": "upsert"}, p))
}
