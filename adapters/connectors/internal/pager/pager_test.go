package pager_test

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/pager"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

func reader(rows ...[]any) pager.Reader {
	return func() ([]any, error) {
		if len(rows) == 0 {
			return nil, nil
		}
		r := rows[0]
		rows = rows[1:]
		return r, nil
	}
}

func all(t *testing.T, pg *pager.Pager) []*execute.Page {
	t.Helper()
	var out []*execute.Page
	for {
		p, err := pg.Next()
		if errors.Is(err, io.EOF) {
			_, err = pg.Next()
			require.ErrorIs(t, err, io.EOF)
			return out
		}
		require.NoError(t, err)
		out = append(out, p)
	}
}

// ids lists the first value of every row of each page.
func ids(pages []*execute.Page) [][]any {
	var out [][]any
	for _, p := range pages {
		var page []any
		for _, r := range p.Rows {
			page = append(page, r[0])
		}
		out = append(out, page)
	}
	return out
}

func marks(pages []*execute.Page) []any {
	var out []any
	for _, p := range pages {
		if p.Bookmark == nil {
			out = append(out, nil)
			continue
		}
		out = append(out, p.Bookmark.Value)
	}
	return out
}

func TestFullReadHasNoBookmarks(t *testing.T) {
	t.Parallel()
	pages := all(t, pager.New(reader([]any{1}, []any{2}, []any{3}), pager.Options{Columns: []string{"id"}, Batch: 2}))
	require.Equal(t, [][]any{{1, 2}, {3}}, ids(pages))
	require.Equal(t, []any{nil, nil}, marks(pages))
	require.Positive(t, pages[0].Bytes)
}

func TestEmpty(t *testing.T) {
	t.Parallel()
	require.Empty(t, all(t, pager.New(reader(), pager.Options{Columns: []string{"id"}, Batch: 2, Cursor: "id"})))
}

// rows of (id, cursor) where the cursor repeats across the page edge at 2.
func tiedRows() []pager.Reader {
	mk := func() pager.Reader {
		return reader([]any{"a", int64(1)}, []any{"b", int64(2)}, []any{"c", int64(2)}, []any{"d", int64(2)},
			[]any{"e", int64(3)}, []any{"f", nil})
	}
	return []pager.Reader{mk(), mk()}
}

func TestTieAtEdgeStepsBack(t *testing.T) {
	t.Parallel()
	pg := pager.New(tiedRows()[0], pager.Options{Columns: []string{"name", "c"}, Batch: 3, Cursor: "c", CursorAt: 1})
	pages := all(t, pg)
	require.Equal(t, [][]any{{"a", "b", "c"}, {"d", "e", "f"}}, ids(pages))
	require.Equal(t, []any{int64(1), int64(3)}, marks(pages),
		"the first page may only promise rows up to 1: more rows of 2 follow it")
	require.Equal(t, &state.Bookmark{Cursor: "c", Value: int64(1)}, pages[0].Bookmark)
}

func TestExactKeepsTiesTogether(t *testing.T) {
	t.Parallel()
	pg := pager.New(tiedRows()[0], pager.Options{Columns: []string{"name", "c"}, Batch: 3, Cursor: "c", CursorAt: 1, Exact: true})
	pages := all(t, pg)
	require.Equal(t, [][]any{{"a", "b", "c", "d"}, {"e", "f"}}, ids(pages), "the page grows until the cursor changes")
	require.Equal(t, []any{int64(2), int64(3)}, marks(pages))
}

func TestTrailingCursorValueIsStripped(t *testing.T) {
	t.Parallel()
	pg := pager.New(reader([]any{"x", "raw1"}, []any{"y", "raw2"}),
		pager.Options{Columns: []string{"name"}, Batch: 5, Cursor: "c", CursorAt: 1})
	pages := all(t, pg)
	require.Equal(t, [][]any{{"x"}, {"y"}}, pages[0].Rows)
	require.Equal(t, "raw2", pages[0].Bookmark.Value)
}

func TestWholePageTiedHasNoBookmark(t *testing.T) {
	t.Parallel()
	pg := pager.New(reader([]any{int64(5)}, []any{int64(5)}, []any{int64(5)}),
		pager.Options{Columns: []string{"c"}, Batch: 2, Cursor: "c"})
	pages := all(t, pg)
	require.Equal(t, []any{nil, int64(5)}, marks(pages))
}

func TestReaderErrorIsReturned(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	n := 0
	pg := pager.New(func() ([]any, error) {
		n++
		if n == 3 {
			return nil, boom
		}
		return []any{int64(n)}, nil
	}, pager.Options{Columns: []string{"c"}, Batch: 2, Cursor: "c"})
	_, err := pg.Next()
	require.ErrorIs(t, err, boom, "the look-ahead read fails")
}
