package format_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
	"github.com/sluicehq/sluice/application/execute"
)

// typed covers the Parquet types SPEC §14.4 maps, written by parquet-go's own struct
// mapping.
type typed struct {
	I32    int32            `parquet:"i32"`
	I64    int64            `parquet:"i64"`
	F32    float32          `parquet:"f32"`
	F64    float64          `parquet:"f64"`
	B      bool             `parquet:"b"`
	S      string           `parquet:"s"`
	Bin    []byte           `parquet:"bin"`
	Millis time.Time        `parquet:"ms,timestamp(millisecond)"`
	Micros time.Time        `parquet:"us,timestamp(microsecond)"`
	Day    int32            `parquet:"day,date"` // days since 1970
	Dec    int64            `parquet:"dec,decimal(2:18)"`
	List   []string         `parquet:"list,list"`
	Map    map[string]int64 `parquet:"map"`
	Opt    *string          `parquet:"opt,optional"`
	After  int64            `parquet:"after"`
}

func readAll(t *testing.T, data []byte) ([]string, [][]any) {
	t.Helper()
	r, err := format.NewParquetReader(bytes.NewReader(data), int64(len(data)), nil, "t.parquet")
	require.NoError(t, err)
	defer r.Close()
	var cols []string
	var rows [][]any
	for {
		keys, vals, size, err := r.Read()
		if errors.Is(err, io.EOF) {
			return cols, rows
		}
		require.NoError(t, err)
		require.Positive(t, size)
		cols = append([]string(nil), keys...)
		rows = append(rows, vals)
	}
}

func TestParquetTypesMapAsSpecified(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.UTC)
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[typed](&buf)
	_, err := w.Write([]typed{{
		I32: -7, I64: 1 << 40, F32: 1.5, F64: 2.25, B: true, S: "text", Bin: []byte{0, 1, 2},
		Millis: at, Micros: at, Day: int32(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).Unix() / 86400), Dec: -12345,
		List: []string{"a", "b"}, Map: map[string]int64{"k": 1}, After: 9,
	}})
	require.NoError(t, err)
	require.NoError(t, w.Close())

	cols, rows := readAll(t, buf.Bytes())
	require.Equal(t, []string{"i32", "i64", "f32", "f64", "b", "s", "bin", "ms", "us", "day", "dec", "list", "map", "opt", "after"}, cols)
	require.Len(t, rows, 1)
	got := map[string]any{}
	for i, c := range cols {
		got[c] = rows[0][i]
	}
	require.Equal(t, int64(-7), got["i32"])
	require.Equal(t, int64(1<<40), got["i64"])
	require.Equal(t, 1.5, got["f32"])
	require.Equal(t, 2.25, got["f64"])
	require.Equal(t, true, got["b"])
	require.Equal(t, "text", got["s"])
	require.Equal(t, []byte{0, 1, 2}, got["bin"])
	require.Equal(t, at.Truncate(time.Millisecond), got["ms"])
	require.Equal(t, at.Truncate(time.Microsecond), got["us"])
	require.Equal(t, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), got["day"])
	require.Equal(t, "-123.45", got["dec"], "a decimal is its exact text")
	require.JSONEq(t, `["a","b"]`, got["list"].(string), "a list is JSON")
	require.JSONEq(t, `{"k":1}`, got["map"].(string), "a map is JSON")
	require.Nil(t, got["opt"])
	require.Equal(t, int64(9), got["after"], "a plain column after nested ones keeps its value")
}

func page(cols []string, rows ...[]any) *execute.Page {
	return &execute.Page{Columns: cols, Rows: rows}
}

func TestParquetWriterRoundTripAndRowGroups(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.UTC)
	for _, comp := range []string{format.Zstd, format.Snappy, format.None} {
		t.Run(comp, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			w, err := format.NewWriter(&buf, format.Options{Format: format.Parquet, Compression: comp, RowGroupRows: 2}, nil)
			require.NoError(t, err)
			cols := []string{"id", "name", "x", "ok", "at", "raw", "doc", "empty"}
			require.NoError(t, w.Write(page(cols,
				[]any{int64(1), "a", 1.5, true, at, []byte{9}, map[string]any{"k": "v"}, nil},
				[]any{int64(2), nil, nil, false, at, nil, []any{int64(1)}, nil},
				[]any{nil, "c", int64(3), nil, nil, []byte{}, nil, nil},
			)))
			// A later page may list fewer columns, in another order.
			require.NoError(t, w.Write(page([]string{"name", "id"}, []any{"d", int64(4)})))
			require.NoError(t, w.Close())

			f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			require.NoError(t, err)
			require.Len(t, f.RowGroups(), 2, "row_group_rows rolls row groups")

			gotCols, rows := readAll(t, buf.Bytes())
			require.Equal(t, cols, gotCols, "the file keeps the page's column order")
			require.Equal(t, [][]any{
				{int64(1), "a", 1.5, true, at, []byte{9}, `{"k":"v"}`, nil},
				{int64(2), nil, nil, false, at, nil, `[1]`, nil},
				{nil, "c", 3.0, nil, nil, []byte{}, nil, nil},
				{int64(4), "d", nil, nil, nil, nil, nil, nil},
			}, rows)
		})
	}
}

func TestParquetWriterRefusals(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w, err := format.NewWriter(&buf, format.Options{Format: format.Parquet}, nil)
	require.NoError(t, err)
	require.NoError(t, w.Write(page([]string{"id"}, []any{int64(1)})))
	require.ErrorContains(t, w.Write(page([]string{"other"}, []any{int64(1)})), `column "other" is not in the Parquet schema`)
	err = w.Write(page([]string{"id"}, []any{"secret-value"}))
	require.ErrorContains(t, err, `column "id"`)
	require.NotContains(t, err.Error(), "secret-value", "errors never quote row data")
}

func TestParquetCorruptFileNamesTheObject(t *testing.T) {
	t.Parallel()
	for name, data := range map[string][]byte{
		"garbage":   []byte("not parquet at all"),
		"truncated": []byte("PAR1\x00\x00\x00\x00PAR1"),
	} {
		_, err := format.NewParquetReader(bytes.NewReader(data), int64(len(data)), nil, "bucket/"+name+".parquet")
		require.ErrorContains(t, err, "bucket/"+name+".parquet: not a readable Parquet file", name)
	}
	// A valid footer over damaged pages fails when the row group is read, naming it.
	var buf bytes.Buffer
	w, err := format.NewWriter(&buf, format.Options{Format: format.Parquet, Compression: format.None}, nil)
	require.NoError(t, err)
	rows := make([][]any, 100)
	for i := range rows {
		rows[i] = []any{int64(i), "some text to damage"}
	}
	require.NoError(t, w.Write(page([]string{"id", "s"}, rows...)))
	require.NoError(t, w.Close())
	data := bytes.Clone(buf.Bytes())
	for i := 4; i < 200 && i < len(data)-8; i++ {
		data[i] = 0xff
	}
	r, err := format.NewParquetReader(bytes.NewReader(data), int64(len(data)), nil, "d.parquet")
	require.NoError(t, err)
	_, _, _, err = r.Read()
	require.ErrorContains(t, err, "d.parquet row group 1")
}

// prefetching counts the reads that miss its prefetched range.
type prefetching struct {
	data          []byte
	lo, hi        int64
	misses, calls int
	maxWindow     int64
}

func (p *prefetching) ReadAt(b []byte, off int64) (int, error) {
	if off < p.lo || off+int64(len(b)) > p.hi {
		p.misses++
	}
	return bytes.NewReader(p.data).ReadAt(b, off)
}

func (p *prefetching) Prefetch(off, n int64) error {
	p.calls++
	p.lo, p.hi = off, off+n
	p.maxWindow = max(p.maxWindow, n)
	return nil
}

func TestParquetReadsOneRowGroupAtATime(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w, err := format.NewWriter(&buf, format.Options{Format: format.Parquet, Compression: format.None, RowGroupRows: 1000}, nil)
	require.NoError(t, err)
	for p := 0; p < 10; p++ {
		rows := make([][]any, 1000)
		for i := range rows {
			rows[i] = []any{int64(p*1000 + i), "row text that takes some room in the page"}
		}
		require.NoError(t, w.Write(page([]string{"id", "s"}, rows...)))
	}
	require.NoError(t, w.Close())
	pf := &prefetching{data: buf.Bytes()}
	r, err := format.NewParquetReader(pf, int64(buf.Len()), nil, "big.parquet")
	require.NoError(t, err)
	footerMisses := pf.misses
	n := 0
	for {
		_, vals, _, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.Equal(t, int64(n), vals[0])
		n++
	}
	require.Equal(t, 10000, n)
	require.Equal(t, 10, pf.calls, "one prefetch per row group")
	require.Equal(t, footerMisses, pf.misses, "every page read falls inside its row group's prefetched range")
	require.Less(t, pf.maxWindow, int64(buf.Len())/5, "a prefetch covers one row group, not the file")
}
