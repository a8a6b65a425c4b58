package conntest

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
	"github.com/sluicehq/sluice/application/execute"
)

// SinkRun writes pages with a fresh sink of c and commits; the first failed write aborts
// the sink (which must succeed) and is returned.
func SinkRun(t testing.TB, c execute.SinkConnector, req execute.WriteRequest, pages ...*execute.Page) error {
	t.Helper()
	s, err := c.OpenSink(context.Background(), req)
	if err != nil {
		return err
	}
	for _, p := range pages {
		if err := s.Write(context.Background(), p); err != nil {
			require.NoError(t, s.Abort(context.Background()))
			return err
		}
	}
	return s.Commit(context.Background())
}

// Read opens a source of c and reads every page; any error, closing included, fails
// the test.
func Read(t testing.TB, c execute.SourceConnector, req execute.ReadRequest) []*execute.Page {
	t.Helper()
	src, err := c.OpenSource(context.Background(), req)
	require.NoError(t, err)
	defer func() { require.NoError(t, src.Close()) }()
	var pages []*execute.Page
	for {
		p, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return pages
		}
		require.NoError(t, err)
		pages = append(pages, p)
	}
}

// ReadAll opens a source of c and reads it to the end, returning the pages read before
// the first error.
func ReadAll(c execute.SourceConnector, req execute.ReadRequest) ([]*execute.Page, error) {
	src, err := c.OpenSource(context.Background(), req)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var pages []*execute.Page
	for {
		p, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return pages, nil
		}
		if err != nil {
			return pages, err
		}
		pages = append(pages, p)
	}
}

// ReadErr reads a source of c to the end and returns the first error.
func ReadErr(c execute.SourceConnector, req execute.ReadRequest) error {
	_, err := ReadAll(c, req)
	return err
}

// Page is a page of rows under cols.
func Page(cols []string, rows ...[]any) *execute.Page {
	return &execute.Page{Columns: cols, Rows: rows}
}

// AllRows is every row of pages, in order.
func AllRows(pages []*execute.Page) [][]any {
	var out [][]any
	for _, p := range pages {
		out = append(out, p.Rows...)
	}
	return out
}

// With is a copy of base with the key/value pairs kv set.
func With(base map[string]any, kv ...any) map[string]any {
	m := make(map[string]any, len(base)+len(kv)/2)
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// Fenced opens a sink of c as the exactly-once writer it must be.
func Fenced(t testing.TB, c execute.SinkConnector, req execute.WriteRequest) execute.FencedSink {
	t.Helper()
	s, err := c.OpenSink(context.Background(), req)
	require.NoError(t, err)
	return s.(execute.FencedSink)
}

// Numbered is a page of one column, id, holding from to to.
func Numbered(from, to int64) *execute.Page {
	p := &execute.Page{Columns: []string{"id"}}
	for i := from; i <= to; i++ {
		p.Rows = append(p.Rows, []any{i})
	}
	return p
}

// ReadBack reads a table back for the connector contract: no rows and false while
// exists says the table is not there, else what rows returns for the columns.
func ReadBack(exists func(t *testing.T) bool, rows func(t *testing.T, cols []string) [][]any) func(*testing.T, []string) ([][]any, bool) {
	return func(t *testing.T, cols []string) ([][]any, bool) {
		if !exists(t) {
			return nil, false
		}
		return rows(t, cols), true
	}
}

// Refusal is a sink config and page the sink must refuse, with text the error holds.
type Refusal struct {
	Name   string
	Config map[string]any
	Page   *execute.Page // nil: no page, the refusal comes from opening or committing
	Want   string
}

// Refusals runs each case as a parallel subtest: run writes the case's page with a
// fresh sink and must fail with an error containing Want.
func Refusals(t *testing.T, run func(t *testing.T, cfg map[string]any, pages ...*execute.Page) error, cases []Refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			var pages []*execute.Page
			if tc.Page != nil {
				pages = append(pages, tc.Page)
			}
			err := run(t, tc.Config, pages...)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.Want)
		})
	}
}

// WatermarkUpgrade checks a sink against a watermark table created by the first release,
// before the completed_by column: the caller made it holding key "_/old" at epoch 3 with
// 7 rows delivered. The sink must add the column, keep the row's meaning, and record
// the run that completes a read from then on.
func WatermarkUpgrade(t *testing.T, open func(t *testing.T) execute.FencedSink) {
	t.Helper()
	ctx := context.Background()
	a := open(t)
	wm, err := a.Fence(ctx, "_/old")
	require.NoError(t, err)
	require.Equal(t, execute.Watermark{Epoch: 4, Position: execute.Position{Rows: 7}}, wm,
		"an old row reads as it was written: no run recorded as having completed it")
	require.NoError(t, a.CommitAt(ctx, execute.Position{CompletedBy: "run-1"}))
	b := open(t)
	wm, err = b.Fence(ctx, "_/old")
	require.NoError(t, err)
	require.Equal(t, execute.Watermark{Epoch: 5, Position: execute.Position{CompletedBy: "run-1"}}, wm)
	require.NoError(t, b.Abort(ctx))
}

// ReadParquet reads a Parquet object through the shared format reader, values in the
// order of cols (nil where a row lacks one).
func ReadParquet(t testing.TB, ra io.ReaderAt, size int64, name string, cols []string) [][]any {
	t.Helper()
	r, err := format.NewParquetReader(ra, size, nil, name)
	require.NoError(t, err)
	defer r.Close()
	var rows [][]any
	for {
		keys, vals, _, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows
		}
		require.NoError(t, err)
		row := make([]any, len(cols))
		for i, c := range cols {
			if j := slices.Index(keys, c); j >= 0 {
				row[i] = vals[j]
			}
		}
		rows = append(rows, row)
	}
}

// Ints returns the int64 values of column col across pages, in order; a page without the
// column or a value of another type fails the test.
func Ints(t testing.TB, pages []*execute.Page, col string) []int64 {
	t.Helper()
	var out []int64
	for _, p := range pages {
		at := slices.Index(p.Columns, col)
		require.GreaterOrEqual(t, at, 0, "column %q missing from %v", col, p.Columns)
		for _, r := range p.Rows {
			v, ok := r[at].(int64)
			require.True(t, ok, "column %q holds %T", col, r[at])
			out = append(out, v)
		}
	}
	return out
}

// Seq is from, from+1, …, to.
func Seq(from, to int) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, int64(i))
	}
	return out
}
