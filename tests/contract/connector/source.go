package connector

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/state"
)

const batch = 10

func checkSpec(t *testing.T, h Harness) {
	s := h.Spec
	require.NotEmpty(t, s.Type, "spec type")
	require.NotEmpty(t, s.Description, "spec description")
	require.Equal(t, h.NewSource != nil, s.Roles&pipeline.RoleSource != 0, "source role matches the harness")
	require.Equal(t, h.NewSink != nil, s.Roles&pipeline.RoleSink != 0, "sink role matches the harness")
	seen := map[string]bool{}
	for _, f := range s.Fields {
		require.NotEmpty(t, f.Name)
		require.False(t, seen[f.Name], "field %q declared twice", f.Name)
		seen[f.Name] = true
		require.NotEmpty(t, f.Description, "field %q has no description", f.Name)
		require.NotEmpty(t, f.Type, "field %q has no type", f.Name)
	}
}

func request(sc SourceCase) execute.ReadRequest {
	cfg := clone(sc.Config)
	if _, ok := cfg["batch_size"]; !ok {
		cfg["batch_size"] = int64(batch)
	}
	return execute.ReadRequest{Config: cfg, BatchSize: batch, BaseDir: sc.BaseDir}
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// readAll reads every page, checking the page invariants, and closes the source.
func readAll(t *testing.T, ctx context.Context, src execute.Source, max int) []*execute.Page {
	t.Helper()
	var pages []*execute.Page
	for {
		p, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.NotNil(t, p)
		require.NotEmpty(t, p.Rows, "a source never returns an empty page")
		require.LessOrEqual(t, len(p.Rows), max, "page larger than batch_size")
		require.NotEmpty(t, p.Columns)
		for _, r := range p.Rows {
			require.Len(t, r, len(p.Columns), "every row has a value per column")
		}
		require.Positive(t, p.Bytes, "Page.Bytes approximates the page's size")
		pages = append(pages, p)
		require.Less(t, len(pages), 10000, "source does not end")
	}
	_, err := src.Next(ctx)
	require.ErrorIs(t, err, io.EOF, "Next after the end keeps returning io.EOF")
	require.NoError(t, src.Close())
	return pages
}

// project returns the pages' rows with values in the order of columns.
func project(t *testing.T, pages []*execute.Page, columns []string) [][]any {
	t.Helper()
	var rows [][]any
	for _, p := range pages {
		for _, c := range p.Columns {
			require.Contains(t, columns, c, "unexpected column")
		}
		pos := make([]int, len(columns))
		for i, c := range columns {
			pos[i] = slices.Index(p.Columns, c)
			require.GreaterOrEqual(t, pos[i], 0, "column %q missing from a page %v", c, p.Columns)
		}
		for _, r := range p.Rows {
			out := make([]any, len(columns))
			for i, j := range pos {
				out[i] = r[j]
			}
			rows = append(rows, out)
		}
	}
	return rows
}

func open(t *testing.T, sc SourceCase, req execute.ReadRequest) execute.Source {
	t.Helper()
	src, err := sc.Source.OpenSource(context.Background(), req)
	require.NoError(t, err)
	return src
}

func runSource(t *testing.T, h Harness) {
	t.Run("source/read", func(t *testing.T) {
		t.Parallel()
		sc := h.NewSource(t, Data(25))
		pages := readAll(t, context.Background(), open(t, sc, request(sc)), batch)
		require.Len(t, pages, 3, "25 rows in pages of 10")
		require.Equal(t, sc.Want.Rows, project(t, pages, sc.Want.Columns))
		for _, p := range pages {
			require.Nil(t, p.Bookmark, "a full read carries no bookmark")
		}
		again := readAll(t, context.Background(), open(t, sc, request(sc)), batch)
		require.Equal(t, project(t, pages, sc.Want.Columns), project(t, again, sc.Want.Columns), "reading twice yields the same rows")
	})
	t.Run("source/empty", func(t *testing.T) {
		t.Parallel()
		sc := h.NewSource(t, Data(0))
		require.Empty(t, readAll(t, context.Background(), open(t, sc, request(sc)), batch))
	})
	t.Run("source/cancel", func(t *testing.T) {
		t.Parallel()
		sc := h.NewSource(t, Data(30))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		src, err := sc.Source.OpenSource(ctx, request(sc))
		require.NoError(t, err)
		p, err := src.Next(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, p.Rows)
		cancel()
		start := time.Now()
		_, err = src.Next(ctx)
		require.ErrorIs(t, err, context.Canceled)
		require.Less(t, time.Since(start), 2*time.Second, "cancellation takes effect promptly")
		require.NoError(t, src.Close())
	})
	t.Run("source/batch_size", func(t *testing.T) {
		t.Parallel()
		sc := h.NewSource(t, Data(7))
		req := request(sc)
		req.BatchSize = 3
		pages := readAll(t, context.Background(), open(t, sc, req), 3)
		require.Len(t, pages, 3, "7 rows in pages of 3")
	})
	if h.BrokenSource != nil {
		t.Run("source/error", func(t *testing.T) {
			t.Parallel()
			bc := h.BrokenSource(t)
			req := request(SourceCase{Config: bc.Config, BaseDir: bc.BaseDir})
			err := readErr(bc.Source, req)
			require.Error(t, err)
			require.Contains(t, err.Error(), bc.Want)
			require.True(t, strings.HasPrefix(err.Error(), h.Spec.Type+":"), "errors name the connector: %v", err)
		})
	}
	if h.Caps.Incremental {
		t.Run("source/incremental", func(t *testing.T) { t.Parallel(); incremental(t, h) })
	}
}

// readErr opens and reads a source to the end, returning the first error.
func readErr(sc execute.SourceConnector, req execute.ReadRequest) error {
	src, err := sc.OpenSource(context.Background(), req)
	if err != nil {
		return err
	}
	defer src.Close()
	for {
		if _, err := src.Next(context.Background()); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func incremental(t *testing.T, h Harness) {
	sc := h.NewSource(t, Data(25))
	read := func(after *state.Bookmark) []*execute.Page {
		req := request(sc)
		req.Incremental = &execute.Incremental{Cursor: "id", After: after}
		return readAll(t, context.Background(), open(t, sc, req), batch)
	}
	pages := read(nil)
	require.Equal(t, sc.Want.Rows, project(t, pages, sc.Want.Columns), "a first incremental read yields every row")
	idCol := slices.Index(sc.Want.Columns, "id")
	require.GreaterOrEqual(t, idCol, 0, "incremental sources need an id column")

	var last *state.Bookmark
	for i, p := range pages {
		if p.Bookmark == nil {
			continue
		}
		require.Equal(t, "id", p.Bookmark.Cursor)
		last = p.Bookmark
		if i == len(pages)-1 {
			continue
		}
		// Resuming after a page's bookmark yields every row past it: nothing is skipped.
		var want [][]any
		for _, r := range sc.Want.Rows {
			if number(t, r[idCol]) > number(t, p.Bookmark.Value) {
				want = append(want, r)
			}
		}
		require.Equal(t, want, project(t, read(p.Bookmark), sc.Want.Columns), "resume after page %d", i+1)
	}
	require.NotNil(t, last, "the read's last page carries a bookmark")
	require.Equal(t, number(t, sc.Want.Rows[len(sc.Want.Rows)-1][idCol]), number(t, last.Value))
	require.Empty(t, read(last), "nothing is past the final bookmark")
}

func number(t *testing.T, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case string:
		f, err := strconv.ParseFloat(x, 64)
		require.NoError(t, err)
		return f
	}
	t.Fatalf("not a number: %#v", v)
	return 0
}
