package generate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/generate"
	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/state"
	"github.com/sluicehq/sluice/tests/contract/connector"
)

func TestContract(t *testing.T) {
	t.Parallel()
	c := generate.New()
	connector.Run(t, connector.Harness{
		Name: "generate",
		Spec: c.Spec(),
		NewSource: func(t *testing.T, data connector.Dataset) connector.SourceCase {
			want := connector.Dataset{Columns: []string{"id"}}
			for i := range data.Rows {
				want.Rows = append(want.Rows, []any{int64(i + 1)})
			}
			return connector.SourceCase{
				Source: c,
				Config: map[string]any{"count": int64(len(data.Rows)), "columns": []any{"id"}},
				Want:   want,
			}
		},
		BrokenSource: func(t *testing.T) connector.BrokenCase {
			return connector.BrokenCase{Source: c, Config: map[string]any{"count": 3, "columns": []any{"id", "colour"}}, Want: `unknown column "colour"`}
		},
		Caps: connector.Capabilities{Incremental: true},
	})
}

func read(t *testing.T, req execute.ReadRequest) []*execute.Page {
	t.Helper()
	pages, err := conntest.ReadAll(generate.New(), req)
	require.NoError(t, err)
	return pages
}

func rows(pages []*execute.Page) [][]any {
	return conntest.AllRows(pages)
}

func TestDefaultColumnsAndTypes(t *testing.T) {
	t.Parallel()
	pages := read(t, execute.ReadRequest{Config: map[string]any{"count": 5}})
	require.Len(t, pages, 1)
	require.Equal(t, []string{"id", "name", "amount", "active", "created_at"}, pages[0].Columns)
	var prev time.Time
	for i, r := range pages[0].Rows {
		require.Equal(t, int64(i+1), r[0])
		require.IsType(t, "", r[1])
		require.NotEmpty(t, r[1])
		require.IsType(t, float64(0), r[2])
		require.IsType(t, false, r[3])
		ts := r[4].(time.Time)
		require.True(t, ts.After(prev), "created_at increases with id")
		prev = ts
	}
}

func TestDeterministicPerSeed(t *testing.T) {
	t.Parallel()
	cfg := func(seed int) execute.ReadRequest {
		return execute.ReadRequest{Config: map[string]any{"count": 50, "seed": seed, "batch_size": 7}}
	}
	a, b, other := rows(read(t, cfg(7))), rows(read(t, cfg(7))), rows(read(t, cfg(8)))
	require.Equal(t, a, b)
	require.NotEqual(t, a, other)
	// Page size does not change the values.
	big := rows(read(t, execute.ReadRequest{Config: map[string]any{"count": 50, "seed": 7}}))
	require.Equal(t, a, big)
}

func TestColumnsSubsetAndOrder(t *testing.T) {
	t.Parallel()
	all := rows(read(t, execute.ReadRequest{Config: map[string]any{"count": 3}}))
	pages := read(t, execute.ReadRequest{Config: map[string]any{"count": 3, "columns": []string{"amount", "id"}}})
	require.Equal(t, []string{"amount", "id"}, pages[0].Columns)
	for i, r := range pages[0].Rows {
		require.Equal(t, []any{all[i][2], all[i][0]}, r)
	}
}

func TestIncrementalResumesAfterBookmark(t *testing.T) {
	t.Parallel()
	full := rows(read(t, execute.ReadRequest{Config: map[string]any{"count": 20}}))
	pages := read(t, execute.ReadRequest{
		Config:      map[string]any{"count": 20, "batch_size": 8},
		Incremental: &execute.Incremental{Cursor: "id", After: &state.Bookmark{Cursor: "id", Value: int64(12)}},
	})
	require.Equal(t, full[12:], rows(pages), "rows after the bookmark are the ones a full read has")
	require.Equal(t, &state.Bookmark{Cursor: "id", Value: int64(20)}, pages[len(pages)-1].Bookmark)
	// A bookmark decoded from JSON may be a float or text.
	for _, v := range []any{float64(12), "12"} {
		p := read(t, execute.ReadRequest{
			Config:      map[string]any{"count": 20},
			Incremental: &execute.Incremental{Cursor: "id", After: &state.Bookmark{Cursor: "id", Value: v}},
		})
		require.Equal(t, full[12:], rows(p))
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		req  execute.ReadRequest
		want string
	}{
		{"missing count", execute.ReadRequest{Config: map[string]any{}}, `"count" is required`},
		{"negative count", execute.ReadRequest{Config: map[string]any{"count": -1}}, `"count" must be 0 or more`},
		{"count not a number", execute.ReadRequest{Config: map[string]any{"count": "many"}}, `"count" must be an integer`},
		{"zero rate", execute.ReadRequest{Config: map[string]any{"count": 1, "rate": 0}}, `"rate" must be greater than 0`},
		{"unknown column", execute.ReadRequest{Config: map[string]any{"count": 1, "columns": []any{"nope"}}}, `unknown column "nope"`},
		{"duplicate column", execute.ReadRequest{Config: map[string]any{"count": 1, "columns": []any{"id", "id"}}}, `listed twice`},
		{"empty columns", execute.ReadRequest{Config: map[string]any{"count": 1, "columns": []any{}}}, `at least one`},
		{"zero batch", execute.ReadRequest{Config: map[string]any{"count": 1, "batch_size": 0}}, `"batch_size" must be between`},
		{"wrong cursor", execute.ReadRequest{Config: map[string]any{"count": 1}, Incremental: &execute.Incremental{Cursor: "name"}}, `cursor must be "id"`},
		{"cursor without id column", execute.ReadRequest{Config: map[string]any{"count": 1, "columns": []any{"name"}}, Incremental: &execute.Incremental{Cursor: "id"}}, `needs the id column`},
		{"bad bookmark", execute.ReadRequest{Config: map[string]any{"count": 1}, Incremental: &execute.Incremental{Cursor: "id", After: &state.Bookmark{Value: "abc"}}}, `not an id`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := generate.New().OpenSource(context.Background(), tc.req)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "generate: ")
		})
	}
}

func TestSpecCheck(t *testing.T) {
	t.Parallel()
	spec := generate.New().Spec()
	require.Empty(t, spec.Check(pipeline.RoleSource, map[string]any{"count": int64(3)}, "pipeline.source.config"))
	errs := spec.Check(pipeline.RoleSource, map[string]any{"count": int64(3), "columns": []any{"x"}}, "pipeline.source.config")
	require.Len(t, errs, 1)
	require.Equal(t, "pipeline.source.config", errs[0].Path)
	require.Contains(t, errs[0].Message, `unknown column "x"`)
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	start := time.Now()
	pages := read(t, execute.ReadRequest{Config: map[string]any{"count": 30, "rate": 100.0}})
	elapsed := time.Since(start)
	require.Len(t, rows(pages), 30)
	require.GreaterOrEqual(t, elapsed, 250*time.Millisecond, "30 rows at 100/s take about 0.3 s")
	for _, p := range pages {
		require.LessOrEqual(t, len(p.Rows), 100, "pages hold about one second of rows")
	}
}

func TestRateWaitHonoursCancellation(t *testing.T) {
	t.Parallel()
	// The first row is due after 1,000 s, far past any test timeout: a wait that ignored
	// the context would never return.
	src, err := generate.New().OpenSource(context.Background(), execute.ReadRequest{Config: map[string]any{"count": 10, "rate": 0.001}})
	require.NoError(t, err)
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = src.Next(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		src, _ := generate.New().OpenSource(context.Background(), execute.ReadRequest{Config: map[string]any{"count": 100000}})
		for {
			if _, err := src.Next(context.Background()); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(b.N)*100000/b.Elapsed().Seconds(), "rows/s")
}
