package connector

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// pages splits d into pages of n rows.
func pages(d Dataset, n int) []*execute.Page {
	var out []*execute.Page
	for i := 0; i < len(d.Rows); i += n {
		out = append(out, &execute.Page{Columns: d.Columns, Rows: d.Rows[i:min(i+n, len(d.Rows))]})
	}
	return out
}

func expected(sc SinkCase, d Dataset) [][]any {
	if sc.Normalize == nil {
		return d.Rows
	}
	return Map(d, sc.Normalize).Rows
}

func openSink(t *testing.T, sc SinkCase, cfg map[string]any) execute.Sink {
	t.Helper()
	s, err := sc.Sink.OpenSink(context.Background(), execute.WriteRequest{Config: cfg, BaseDir: sc.BaseDir})
	require.NoError(t, err)
	return s
}

// write runs a whole sink: every page, then Commit.
func write(t *testing.T, sc SinkCase, cfg map[string]any, d Dataset) {
	t.Helper()
	s := openSink(t, sc, cfg)
	for _, p := range pages(d, batch) {
		require.NoError(t, s.Write(context.Background(), p))
	}
	require.NoError(t, s.Commit(context.Background()))
	noLeftovers(t, sc)
}

func noLeftovers(t *testing.T, sc SinkCase) {
	t.Helper()
	if sc.Leftovers != nil {
		require.Empty(t, sc.Leftovers(t), "temporary artifacts left behind")
	}
}

func readBack(t *testing.T, sc SinkCase, cols []string) ([][]any, bool) {
	t.Helper()
	rows, exists := sc.ReadBack(t, cols)
	return rows, exists
}

// poisoned is a page whose middle row holds a value no sink can write.
func poisoned(d Dataset) *execute.Page {
	rows := slices.Clone(d.Rows[:3])
	bad := slices.Clone(rows[1])
	bad[len(bad)-1] = make(chan int)
	rows[1] = bad
	return &execute.Page{Columns: d.Columns, Rows: rows}
}

func runSink(t *testing.T, h Harness) {
	data := Data(25)
	t.Run("sink/roundtrip", func(t *testing.T) {
		t.Parallel()
		sc := h.NewSink(t)
		write(t, sc, clone(sc.Config), data)
		rows, exists := readBack(t, sc, data.Columns)
		require.True(t, exists)
		require.Equal(t, expected(sc, data), rows)
	})
	t.Run("sink/empty", func(t *testing.T) {
		t.Parallel()
		sc := h.NewSink(t)
		s := openSink(t, sc, clone(sc.Config))
		require.NoError(t, s.Commit(context.Background()), "zero pages is a valid, empty output")
		noLeftovers(t, sc)
		rows, _ := readBack(t, sc, data.Columns)
		require.Empty(t, rows)
	})
	t.Run("sink/cancel", func(t *testing.T) {
		t.Parallel()
		sc := h.NewSink(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := openSink(t, sc, clone(sc.Config))
		ps := pages(data, batch)
		require.NoError(t, s.Write(ctx, ps[0]))
		require.NoError(t, s.Write(ctx, ps[1]))
		cancel()
		require.ErrorIs(t, s.Write(ctx, ps[2]), context.Canceled, "a write after cancellation fails")
		confirmed := Dataset{Columns: data.Columns, Rows: data.Rows[:2*batch]}
		finish(t, s, sc, confirmed)
	})
	t.Run("sink/write_failure", func(t *testing.T) {
		t.Parallel()
		sc := h.NewSink(t)
		s := openSink(t, sc, clone(sc.Config))
		ps := pages(data, batch)
		require.NoError(t, s.Write(context.Background(), ps[0]))
		require.NoError(t, s.Write(context.Background(), ps[1]))
		err := s.Write(context.Background(), poisoned(Dataset{Columns: data.Columns, Rows: data.Rows[2*batch:]}))
		require.Error(t, err)
		require.True(t, strings.HasPrefix(err.Error(), h.Spec.Type+":"), "errors name the connector: %v", err)
		require.Contains(t, err.Error(), data.Columns[len(data.Columns)-1], "the error names the column")
		finish(t, s, sc, Dataset{Columns: data.Columns, Rows: data.Rows[:2*batch]})
	})
	if h.Caps.Upsert {
		t.Run("sink/upsert", func(t *testing.T) { t.Parallel(); upsert(t, h) })
	}
	if h.Caps.Delete {
		t.Run("sink/delete", func(t *testing.T) { t.Parallel(); deleteMode(t, h) })
	}
	if h.Caps.Overwrite {
		t.Run("sink/overwrite", func(t *testing.T) { t.Parallel(); overwrite(t, h) })
	}
	if h.Caps.ExactlyOnce {
		t.Run("sink/exactly_once_replay", func(t *testing.T) { t.Parallel(); exactlyOnceReplay(t, h) })
		t.Run("sink/exactly_once_shards", func(t *testing.T) { t.Parallel(); exactlyOnceShards(t, h) })
	}
	if h.Caps.ConcurrentCreate {
		t.Run("sink/concurrent_create", func(t *testing.T) { t.Parallel(); concurrentCreate(t, h) })
	}
}

// finish ends an interrupted sink the way the executor does: an AtEnd sink is aborted
// and must leave nothing that looks complete; a PerPage sink commits and keeps exactly
// the confirmed pages.
func finish(t *testing.T, s execute.Sink, sc SinkCase, confirmed Dataset) {
	t.Helper()
	bg := context.Background()
	switch s.Durability() {
	case execute.AtEnd:
		require.NoError(t, s.Abort(bg))
		noLeftovers(t, sc)
		rows, exists := readBack(t, sc, confirmed.Columns)
		if sc.KeepsSent {
			want := expected(sc, confirmed)
			require.LessOrEqual(t, len(rows), len(want), "an aborted sink keeps no row past the confirmed ones")
			if len(rows) > 0 {
				require.Equal(t, want[:len(rows)], rows, "what an aborted sink keeps is a prefix of the confirmed rows")
			}
			return
		}
		require.False(t, exists, "an aborted AtEnd sink leaves no output")
		require.Empty(t, rows)
	case execute.PerPage:
		require.NoError(t, s.Commit(bg))
		noLeftovers(t, sc)
		rows, _ := readBack(t, sc, confirmed.Columns)
		require.Equal(t, expected(sc, confirmed), rows, "confirmed pages are kept, the failed one is not")
	default:
		t.Fatalf("unknown durability %v", s.Durability())
	}
}

func withMode(cfg map[string]any, mode pipeline.WriteMode, key bool) map[string]any {
	c := clone(cfg)
	c["write_mode"] = string(mode)
	if key {
		c["key"] = []string{"id"}
	}
	return c
}

// sorted orders rows by their first value (id).
func sorted(rows [][]any) [][]any {
	out := slices.Clone(rows)
	id := func(v any) float64 {
		f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
		return f
	}
	slices.SortStableFunc(out, func(a, b []any) int { return cmp.Compare(id(a[0]), id(b[0])) })
	return out
}

func upsert(t *testing.T, h Harness) {
	sc := h.NewSink(t)
	cfg := withMode(sc.Config, pipeline.Upsert, true)
	first := Data(15)
	write(t, sc, cfg, first)

	// Rows 11..25: 11..15 change, 16..25 are new.
	second := Dataset{Columns: first.Columns}
	for _, r := range Data(25).Rows[10:] {
		r = slices.Clone(r)
		r[1] = "changed " + r[1].(string)
		second.Rows = append(second.Rows, r)
	}
	write(t, sc, cfg, second)
	want := Dataset{Columns: first.Columns, Rows: append(slices.Clone(first.Rows[:10]), second.Rows...)}
	rows, _ := readBack(t, sc, first.Columns)
	require.Equal(t, expected(sc, want), sorted(rows))

	write(t, sc, cfg, second) // idempotent: replaying the same pages changes nothing
	rows, _ = readBack(t, sc, first.Columns)
	require.Equal(t, expected(sc, want), sorted(rows))
}

func deleteMode(t *testing.T, h Harness) {
	sc := h.NewSink(t)
	all := Data(25)
	write(t, sc, clone(sc.Config), all)
	var gone, kept Dataset
	gone.Columns, kept.Columns = all.Columns, all.Columns
	for _, r := range all.Rows {
		if r[0].(int64)%2 == 1 {
			gone.Rows = append(gone.Rows, r)
		} else {
			kept.Rows = append(kept.Rows, r)
		}
	}
	write(t, sc, withMode(sc.Config, pipeline.Delete, true), gone)
	rows, _ := readBack(t, sc, all.Columns)
	require.Equal(t, expected(sc, kept), sorted(rows))
}

func overwrite(t *testing.T, h Harness) {
	sc := h.NewSink(t)
	old := Dataset{Columns: Data(0).Columns, Rows: Data(25).Rows[20:]}
	write(t, sc, clone(sc.Config), old)
	cfg := withMode(sc.Config, pipeline.Overwrite, false)

	// A failed overwrite rolls back: the old rows are still there, untouched.
	s := openSink(t, sc, cfg)
	require.Equal(t, execute.AtEnd, s.Durability(), "overwrite is final only on Commit")
	d := Data(12)
	require.NoError(t, s.Write(context.Background(), pages(d, batch)[0]))
	require.Error(t, s.Write(context.Background(), poisoned(d)))
	require.NoError(t, s.Abort(context.Background()))
	noLeftovers(t, sc)
	rows, exists := readBack(t, sc, old.Columns)
	require.True(t, exists)
	require.Equal(t, expected(sc, old), rows)

	write(t, sc, cfg, d)
	rows, _ = readBack(t, sc, d.Columns)
	require.Equal(t, expected(sc, d), rows)
}
