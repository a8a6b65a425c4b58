package postgres_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/postgres"
	"github.com/sluicehq/sluice/application/execute"
)

// binaryCols are columns of every type the sink writes as COPY BINARY.
const binaryDef = `(i2 smallint, i4 integer, i8 bigint, f8 double precision, b boolean, tx text, vc varchar(20),
	by bytea, tz timestamptz, ts timestamp, d date)`

var binaryCols = []string{"i2", "i4", "i8", "f8", "b", "tx", "vc", "by", "tz", "ts", "d"}

// binaryRows are edge values of each type, NULLs included.
func binaryRows() [][]any {
	return [][]any{
		{int64(math.MinInt16), int64(math.MinInt32), int64(math.MinInt64), 0.1, true, "multi\nline\\back\ttab", "ünïcødé",
			[]byte{0, 0xff, '\\', '\n'}, utc("1969-07-20T20:17:40Z"), utc("1999-12-31T23:59:59.999999Z"), utc("1999-12-31T23:00:00Z")},
		{int64(math.MaxInt16), int64(math.MaxInt32), int64(math.MaxInt64), math.Inf(-1), false, "", "x",
			[]byte{}, utc("9999-12-31T23:59:59.999999Z"), utc("0001-01-01T00:00:00Z"), utc("0001-01-01T00:00:00Z")},
		{int32(7), int16(-3), int(42), math.NaN(), false, []byte("bytes as text"), "v", []byte("b"),
			utc("2000-01-01T00:00:00Z"), utc("2000-01-01T00:00:00.000001Z"), utc("2026-12-04T15:00:00Z")},
		{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
	}
}

func sinkInto(t *testing.T, d *db, table string, bookmarks bool, pages ...*execute.Page) error {
	t.Helper()
	return conntest.SinkRun(t, postgres.New(), execute.WriteRequest{Bookmarks: bookmarks,
		Config: map[string]any{"connection_url": d.url, "table_name": table}}, pages...)
}

// The binary form must store exactly what the text form stores: the same rows written
// as one streamed COPY, as per-page COPYs (bookmarks), and forced through text by a
// value that has no binary form read back identical.
func TestBinaryCopyStoresWhatTextCopyStores(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	for _, tb := range []string{"streamed", "per_page", "text"} {
		d.exec(t, "CREATE TABLE "+tb+" "+binaryDef)
	}
	rows := binaryRows()
	require.NoError(t, sinkInto(t, d, "streamed", false, page(binaryCols, rows[:2]...), page(binaryCols, rows[2:]...)))
	require.NoError(t, sinkInto(t, d, "per_page", true, page(binaryCols, rows[:2]...), page(binaryCols, rows[2:]...)))
	// A string for the bigint column has no binary form: the run goes as text, where
	// PostgreSQL parses it; it is deleted afterwards so the tables can be compared.
	odd := []any{nil, nil, "17", nil, nil, "odd", nil, nil, nil, nil, nil}
	require.NoError(t, sinkInto(t, d, "text", false, page(binaryCols, append([][]any{odd}, rows...)...)))
	require.Equal(t, [][]any{{int64(17)}}, d.rows(t, "SELECT i8 FROM text WHERE tx = 'odd'"))
	d.exec(t, "DELETE FROM text WHERE tx = 'odd'")

	want := d.rows(t, "SELECT s::text FROM text s ORDER BY i8 NULLS LAST")
	require.Len(t, want, 4)
	require.Equal(t, want, d.rows(t, "SELECT s::text FROM streamed s ORDER BY i8 NULLS LAST"))
	require.Equal(t, want, d.rows(t, "SELECT s::text FROM per_page s ORDER BY i8 NULLS LAST"))
	require.Equal(t, [][]any{{
		"(-32768,-2147483648,-9223372036854775808,0.1,t,\"multi\nline\\\\back\ttab\",ünïcødé,\"\\\\x00ff5c0a\"," +
			"\"1969-07-20 20:17:40+00\",\"1999-12-31 23:59:59.999999\",1999-12-31)",
	}}, want[:1], "the values are the ones written (the session's time zone is UTC)")
}

// A page with a value that has no exact binary form (a time with nanoseconds, which
// PostgreSQL rounds itself) switches a streamed run to text from that page on.
func TestBinaryCopySwitchesToTextMidRun(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE t (id bigint, at timestamptz)")
	cols := []string{"id", "at"}
	require.NoError(t, sinkInto(t, d, "t", false,
		page(cols, []any{int64(1), utc("2025-01-01T00:00:00.000001Z")}),
		page(cols, []any{int64(2), utc("2025-01-01T00:00:00.0000015Z")}),
		page(cols, []any{int64(3), utc("2025-01-01T00:00:00.000003Z")})))
	require.Equal(t, [][]any{
		{int64(1), utc("2025-01-01T00:00:00.000001Z")},
		{int64(2), utc("2025-01-01T00:00:00.000002Z")},
		{int64(3), utc("2025-01-01T00:00:00.000003Z")},
	}, d.rows(t, "SELECT id, at FROM t ORDER BY id"))
}

// An integer out of a column's range has no binary form either: PostgreSQL's own
// message names the column, as before.
func TestBinaryCopyLeavesRangeErrorsToPostgres(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE t (small smallint)")
	err := sinkInto(t, d, "t", false, page([]string{"small"}, []any{int64(1)}, []any{int64(40000)}))
	require.ErrorContains(t, err, "out of range")
	require.ErrorContains(t, err, "small")
	require.Empty(t, d.rows(t, "SELECT * FROM t"), "the run's one COPY left nothing")
}
