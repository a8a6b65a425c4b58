package postgres_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

func TestSourceTypes(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE ty (
		i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, n numeric(20,5), nbig numeric,
		tx text, vc varchar(10), ch char(3), b boolean, tz timestamptz, ts timestamp, d date,
		j json, jb jsonb, by bytea, u uuid, ai integer[], at text[], iv interval, ip inet, e text)`)
	d.exec(t, `INSERT INTO ty VALUES (
		-2, 40000, 9007199254740993, 1.5, 2.25, 123456789012345.12345, 123456789012345678901234567890.5,
		'tab	and "q"', 'v', 'ab', true, '2025-03-01 08:00:00.123456+01', '2025-03-01 08:00:00.5', '2025-03-02',
		'{"a": 1, "b": [true, null, 2.5]}', '{"big": 9007199254740993}', '\x0102ff', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
		'{1,NULL,3}', '{"x y","z"}', '1 day 02:00:00', '10.0.0.1/8', NULL),
		(NULL, NULL, NULL, 'NaN', '-Infinity', NULL, NULL, '', NULL, NULL, false, 'infinity', NULL, NULL,
		'null', '[]', '\x', NULL, '{}', NULL, NULL, NULL, NULL)`)
	pages := read(t, execute.ReadRequest{Config: map[string]any{"connection_url": d.url, "query": "SELECT * FROM ty ORDER BY b DESC"}})
	require.Len(t, pages, 1)
	require.Equal(t, []string{"i2", "i4", "i8", "f4", "f8", "n", "nbig", "tx", "vc", "ch", "b", "tz", "ts", "d",
		"j", "jb", "by", "u", "ai", "at", "iv", "ip", "e"}, pages[0].Columns)
	require.Equal(t, []any{
		int64(-2), int64(40000), int64(9007199254740993), 1.5, 2.25, "123456789012345.12345", "123456789012345678901234567890.5",
		"tab\tand \"q\"", "v", "ab ", true, utc("2025-03-01T07:00:00.123456Z"), utc("2025-03-01T08:00:00.5Z"), utc("2025-03-02T00:00:00Z"),
		map[string]any{"a": int64(1), "b": []any{true, nil, 2.5}}, map[string]any{"big": int64(9007199254740993)},
		[]byte{1, 2, 0xff}, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
		[]any{int64(1), nil, int64(3)}, []any{"x y", "z"}, "1 day 02:00:00", "10.0.0.1/8", nil,
	}, pages[0].Rows[0])
	second := pages[0].Rows[1]
	require.Nil(t, second[0])
	require.True(t, second[3].(float64) != second[3].(float64), "NaN")
	require.Equal(t, []any{"", nil, nil, false, "infinity"}, []any{second[7], second[8], second[9], second[10], second[11]})
	require.Equal(t, []any{nil, []any{}, []byte{}}, []any{second[14], second[15], second[16]})
}

// cursorTable holds cursor values with three rows of 3 exactly at the edge of 3-row pages.
func cursorTable(t *testing.T) *db {
	d := newDB(t)
	d.exec(t, `CREATE TABLE ev (id int PRIMARY KEY, c bigint)`)
	d.exec(t, `INSERT INTO ev VALUES (1, 1), (2, 2), (3, 3), (4, 3), (5, 3), (6, 4), (7, 5), (8, NULL)`)
	return d
}

func ids(pages []*execute.Page) []int64 {
	var out []int64
	for _, r := range allRows(pages) {
		out = append(out, r[0].(int64))
	}
	return out
}

func TestIncrementalTieAtPageEdge(t *testing.T) {
	t.Parallel()
	d := cursorTable(t)
	req := func(after *state.Bookmark, exact bool) execute.ReadRequest {
		return execute.ReadRequest{BatchSize: 3,
			Config:      map[string]any{"connection_url": d.url, "query": "SELECT id, c FROM ev -- trailing comment"},
			Incremental: &execute.Incremental{Cursor: "c", After: after, Exact: exact}}
	}
	pages := read(t, req(nil, false))
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 8}, ids(pages))
	require.Equal(t, &state.Bookmark{Cursor: "c", Value: int64(2)}, pages[0].Bookmark,
		"rows 4 and 5 share the cursor value 3 with the page's last row, so the page may only promise 2")

	// Resuming after every page's bookmark skips nothing.
	for _, p := range pages {
		if p.Bookmark == nil {
			continue
		}
		var want []int64
		for _, r := range [][2]int64{{1, 1}, {2, 2}, {3, 3}, {4, 3}, {5, 3}, {6, 4}, {7, 5}} {
			if r[1] > p.Bookmark.Value.(int64) {
				want = append(want, r[0])
			}
		}
		require.Equal(t, want, ids(read(t, req(p.Bookmark, false))), "resume after %v", p.Bookmark.Value)
	}

	exact := read(t, req(nil, true))
	require.Len(t, exact[0].Rows, 5, "an exact page grows until the cursor changes")
	require.Equal(t, int64(3), exact[0].Bookmark.Value)
	require.Equal(t, []int64{6, 7}, ids(read(t, req(exact[0].Bookmark, true))[:1]))
}

func TestIncrementalTimestampCursor(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE ev (id int, at timestamptz)`)
	d.exec(t, `INSERT INTO ev SELECT g, '2025-01-01 00:00:00.000001+00'::timestamptz + (g / 2) * interval '1 microsecond' FROM generate_series(1, 9) g`)
	cfg := map[string]any{"connection_url": d.url, "query": "SELECT * FROM ev"}
	var got []int64
	var after *state.Bookmark
	for range 20 {
		pages := read(t, execute.ReadRequest{Config: cfg, BatchSize: 2,
			Incremental: &execute.Incremental{Cursor: "at", After: after, Exact: true}})
		if len(pages) == 0 {
			break
		}
		got = append(got, ids(pages[:1])...)
		after = pages[0].Bookmark
		require.IsType(t, "", after.Value, "times are bookmarked as RFC 3339 text")
	}
	require.ElementsMatch(t, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, got, "one page at a time, every row exactly once")
}

func TestSourceErrors(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	u, err := url.Parse(d.url)
	require.NoError(t, err)
	u.User = url.UserPassword(u.User.Username(), "Sup3rS3cretPw")
	withPw := u.String()

	err = readErr(execute.ReadRequest{Config: map[string]any{"connection_url": withPw, "query": "SELECT * FROM nope"}})
	require.ErrorContains(t, err, `postgres: query: ERROR: relation "nope" does not exist (SQLSTATE 42P01)`)
	require.NotContains(t, err.Error(), "Sup3rS3cretPw")

	err = readErr(execute.ReadRequest{Config: map[string]any{"connection_url": withPw, "query": "SELECT 1/(g-3) FROM generate_series(1,5) g"}})
	require.ErrorContains(t, err, "division by zero", "an error while rows stream is reported too")

	u.Path = "/no_such_database_here"
	err = readErr(execute.ReadRequest{Config: map[string]any{"connection_url": u.String(), "query": "SELECT 1"}})
	require.ErrorContains(t, err, `database "no_such_database_here" does not exist`)
	require.NotContains(t, err.Error(), "Sup3rS3cretPw")

	err = readErr(execute.ReadRequest{Config: map[string]any{"connection_url": d.url, "query": "SELECT 1 AS a"},
		Incremental: &execute.Incremental{Cursor: "b"}})
	require.ErrorContains(t, err, `is the cursor column "b" a column of the query?`)

	err = readErr(execute.ReadRequest{Config: map[string]any{"connection_url": "mysql://x@y/z", "query": "SELECT 1"}})
	require.ErrorContains(t, err, "connection_url must be a postgres:// or postgresql:// URL")
}

func TestSourceCancelMidStream(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	src, err := newSource(t, d.url, "SELECT g FROM generate_series(1, 200000) g", 100)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	_, err = src.Next(ctx)
	require.NoError(t, err)
	cancel()
	_, err = src.Next(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, src.Close())
}
