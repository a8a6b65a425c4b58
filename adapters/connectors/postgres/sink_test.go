package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/postgres"
	"github.com/sluicehq/sluice/application/execute"
)

func TestSinkTypeRoundTrip(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	const def = `(i2 smallint, i8 bigint, f8 double precision, n numeric(20,5), tx text, b boolean, tz timestamptz,
		ts timestamp, d date, j json, jb jsonb, by bytea, u uuid, ai integer[], at text[], ab bytea[], iv interval)`
	d.exec(t, `CREATE TABLE src `+def)
	d.exec(t, `CREATE TABLE dst `+def)
	d.exec(t, `INSERT INTO src VALUES (7, -9007199254740993, 0.1, 1.5, e'multi\nline\\back\ttab', true,
		'2025-03-01 08:00:00.123456+00', '2025-03-01 08:00:00', '2025-03-02', '{"a":[1,"x"]}', '{"k":{"n":null}}',
		'\x00ff', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{1,NULL}', '{"a\"b","c,d","e\\f"}', '{"\\x0102"}', '3 days'),
		(NULL, NULL, 'Infinity', NULL, '', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
	pages := read(t, execute.ReadRequest{Config: map[string]any{"connection_url": d.url, "query": "SELECT * FROM src"}})
	require.NoError(t, sinkRun(t, map[string]any{"connection_url": d.url, "table_name": "dst"}, pages...))
	require.Equal(t, d.rows(t, "SELECT s::text FROM src s"), d.rows(t, "SELECT s::text FROM dst s"))
	require.Equal(t,
		d.rows(t, "SELECT i2, i8, f8, n::text, tx, b, tz, ts, d, j::text, jb, by, u::text, ai, at, ab::text[], iv::text FROM src"),
		d.rows(t, "SELECT i2, i8, f8, n::text, tx, b, tz, ts, d, j::text, jb, by, u::text, ai, at, ab::text[], iv::text FROM dst"),
		"every value survives a read and a write")
}

func TestSinkCreateTableTypes(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	// A schema of its own with a name that needs quoting; schemas live outside the test's.
	schema := `we"ird ` + d.schema(t)
	qschema := `"` + strings.ReplaceAll(schema, `"`, `""`) + `"`
	at := time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)
	cfg := map[string]any{"connection_url": d.url, "table_name": qschema + `."Ta ble"`,
		"create_table": true, "key": []any{"my id"}, "write_mode": "upsert"}
	require.ErrorContains(t, sinkRun(t, cfg, page([]string{"my id"}, []any{int64(1)})),
		`schema "`+schema+`" does not exist`, "create_table creates no schema")
	d.exec(t, `CREATE SCHEMA `+qschema)
	t.Cleanup(func() { d.conn.Exec(context.Background(), `DROP SCHEMA `+qschema+` CASCADE`) })
	require.NoError(t, sinkRun(t, cfg,
		page([]string{"my id", "n", "f", "b", "t", "blob", "s", "later", "m", "l"},
			[]any{int64(1), nil, 1.5, true, at, []byte{9}, "x", nil, map[string]any{"a": int64(1)}, []any{"q"}})))
	rel := qschema + `."Ta ble"`
	require.Equal(t, [][]any{
		{"my id", "bigint"}, {"n", "text"}, {"f", "double precision"}, {"b", "boolean"}, {"t", "timestamp with time zone"},
		{"blob", "bytea"}, {"s", "text"}, {"later", "text"}, {"m", "jsonb"}, {"l", "jsonb"},
	}, d.rows(t, `SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = $1::regclass AND attnum > 0 ORDER BY attnum`, rel))
	require.Equal(t, [][]any{{"PRIMARY KEY (\"my id\")"}},
		d.rows(t, `SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = $1::regclass`, rel))
	require.Equal(t, [][]any{{int64(1), at}}, d.rows(t, `SELECT "my id", t FROM `+rel))
}

func TestSinkRefusals(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t (id bigint PRIMARY KEY, amount integer, name text)`)
	d.exec(t, `CREATE TABLE nokey (id bigint, name text)`)
	base := func(kv ...any) map[string]any {
		return conntest.With(map[string]any{"connection_url": d.url, "table_name": "t"}, kv...)
	}
	cases := []conntest.Refusal{
		{Name: "missing table", Config: base("table_name", "orders"), Page: nil,
			Want: `postgres: table "orders" does not exist; create it or set create_table: true`},
		{Name: "unknown columns", Config: base(), Page: page([]string{"id", "extra", "more"}, []any{int64(1), "x", "y"}),
			Want: `postgres: table "t": the table has no columns "extra", "more"; add them to the table or leave them out of the source`},
		{Name: "type mismatch names the column", Config: base(), Page: page([]string{"id", "amount"}, []any{int64(1), "a lot"}),
			Want: `invalid input syntax for type integer: "a lot" (SQLSTATE 22P02); COPY t, line 1, column amount: "a lot"`},
		{Name: "number too large for the column", Config: base(), Page: page([]string{"id", "amount"}, []any{int64(1), int64(1) << 40}),
			Want: `column amount`},
		{Name: "upsert without the key column", Config: base("write_mode", "upsert", "key", []any{"id"}), Page: page([]string{"name"}, []any{"x"}),
			Want: `key column "id" is not among the page's columns [name]`},
		{Name: "upsert without a unique constraint", Config: base("table_name", "nokey", "write_mode", "upsert", "key", []any{"id"}), Page: page([]string{"id", "name"}, []any{int64(1), "x"}),
			Want: `upsert needs a PRIMARY KEY or UNIQUE constraint on (id)`},
		{Name: "jsonb without its column", Config: base("column_mapping", "jsonb"), Page: nil,
			Want: `has no column "data" for column_mapping: jsonb`},
		{Name: "unwritable value", Config: base(), Page: page([]string{"id", "name"}, []any{int64(1), make(chan int)}),
			Want: `column "name": unsupported value type chan int`},
	}
	conntest.Refusals(t, sinkRun, cases)
	require.Empty(t, d.rows(t, "SELECT * FROM t"), "no refused page left a row")
}

func TestSinkUpsertKeepsLastRowOfAKey(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t (id bigint PRIMARY KEY, name text, extra text DEFAULT 'kept')`)
	cfg := map[string]any{"connection_url": d.url, "table_name": "t", "write_mode": "upsert", "key": []any{"id"}}
	p := page([]string{"id", "name"}, []any{int64(1), "first"}, []any{int64(2), "b"}, []any{int64(1), "last"})
	require.NoError(t, sinkRun(t, cfg, p))
	require.NoError(t, sinkRun(t, cfg, p), "replaying changes nothing")
	require.Equal(t, [][]any{{int64(1), "last", "kept"}, {int64(2), "b", "kept"}}, d.rows(t, "SELECT * FROM t ORDER BY id"))

	// Only key columns: rows are inserted once, never updated.
	require.NoError(t, sinkRun(t, cfg, page([]string{"id"}, []any{int64(3)}, []any{int64(3)})))
	require.Len(t, d.rows(t, "SELECT * FROM t"), 3)
}

func TestSinkDeleteAndOverwrite(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t (a int, b text, v text)`)
	d.exec(t, `INSERT INTO t VALUES (1, 'x', 'keep'), (1, 'y', 'gone'), (2, 'y', 'keep'), (NULL, 'y', 'null key stays')`)
	require.NoError(t, sinkRun(t, map[string]any{"connection_url": d.url, "table_name": "t", "write_mode": "delete", "key": []any{"a", "b"}},
		page([]string{"a", "b"}, []any{int64(1), "y"}, []any{nil, "y"}, []any{int64(9), "z"})))
	require.Equal(t, [][]any{{"keep"}, {"keep"}, {"null key stays"}}, d.rows(t, "SELECT v FROM t ORDER BY v"))

	require.NoError(t, sinkRun(t, map[string]any{"connection_url": d.url, "table_name": "t", "write_mode": "overwrite"}))
	require.Empty(t, d.rows(t, "SELECT * FROM t"), "an overwrite without pages empties the table")
}

func TestSinkJSONBMapping(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	cfg := map[string]any{"connection_url": d.url, "table_name": "docs", "column_mapping": "jsonb", "jsonb_column": "doc",
		"key": []any{"id"}, "write_mode": "upsert", "create_table": true}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, sinkRun(t, cfg, page([]string{"id", "name", "at", "tags"},
		[]any{int64(1), "a\tb", at, []any{"x"}}, []any{int64(2), nil, nil, nil})))
	require.NoError(t, sinkRun(t, cfg, page([]string{"id", "name", "at", "tags"}, []any{int64(2), "now set", nil, nil})))
	require.Equal(t, [][]any{
		{int64(1), map[string]any{"id": float64(1), "name": "a\tb", "at": "2025-01-02T03:04:05Z", "tags": []any{"x"}}},
		{int64(2), map[string]any{"id": float64(2), "name": "now set", "at": nil, "tags": nil}},
	}, d.rows(t, "SELECT id, doc FROM docs ORDER BY id"))
}

func TestSinkConnectErrorHidesPassword(t *testing.T) {
	t.Parallel()
	_, err := postgres.New().OpenSink(context.Background(), execute.WriteRequest{Config: map[string]any{
		"connection_url": "postgres://someone:VerySecretPw@127.0.0.1:1/db?connect_timeout=2", "table_name": "t"}})
	require.ErrorContains(t, err, "postgres: connect to 127.0.0.1:1/db")
	require.NotContains(t, err.Error(), "VerySecretPw")
}
