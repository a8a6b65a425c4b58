package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/sqlite"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

func readPages(t *testing.T, req execute.ReadRequest) ([]*execute.Page, error) {
	t.Helper()
	return conntest.ReadAll(sqlite.New(), req)
}

func allRows(pages []*execute.Page) [][]any {
	return conntest.AllRows(pages)
}

func TestSourceTypes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "x.db"))
	exec(t, db, `CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n TEXT, d DATETIME)`)
	exec(t, db, `INSERT INTO t VALUES (7, 1.5, 'x', x'0102', NULL, '2025-01-02 03:04:05')`)
	pages, err := readPages(t, execute.ReadRequest{Config: map[string]any{"connection_url": "x.db", "query": "SELECT * FROM t"}, BaseDir: dir})
	require.NoError(t, err)
	require.Equal(t, []string{"i", "r", "s", "b", "n", "d"}, pages[0].Columns)
	require.Equal(t, []any{int64(7), 1.5, "x", []byte{1, 2}, nil, time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}, pages[0].Rows[0])
	require.Positive(t, pages[0].Bytes)
}

// ties builds a table whose cursor values repeat across page edges.
func ties(t *testing.T) (string, [][]any) {
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "t.db"))
	exec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY, c INTEGER)`)
	var all [][]any
	for i, c := range []int64{1, 2, 2, 2, 2, 3, 3, 4, 5, 5, 5, 5, 5, 6} {
		exec(t, db, `INSERT INTO t VALUES (?, ?)`, i+1, c)
		all = append(all, []any{int64(i + 1), c})
	}
	return dir, all
}

func TestIncrementalNeverSkipsTiesAtPageEdges(t *testing.T) {
	t.Parallel()
	dir, all := ties(t)
	read := func(after *state.Bookmark) []*execute.Page {
		pages, err := readPages(t, execute.ReadRequest{
			Config:      map[string]any{"connection_url": "t.db", "query": "SELECT id, c FROM t", "batch_size": 3},
			BaseDir:     dir,
			Incremental: &execute.Incremental{Cursor: "c", After: after},
		})
		require.NoError(t, err)
		return pages
	}
	pages := read(nil)
	require.Equal(t, all, allRows(pages))
	var marks []any
	for _, p := range pages {
		if p.Bookmark == nil {
			marks = append(marks, nil)
			continue
		}
		require.Equal(t, "c", p.Bookmark.Cursor)
		marks = append(marks, p.Bookmark.Value)
	}
	// Pages (c values): [1 2 2] [2 2 3] [3 4 5] [5 5 5] [5 6]. A page whose last value
	// continues on the next page steps back to the value before the tie.
	require.Equal(t, []any{int64(1), int64(2), int64(4), nil, int64(6)}, marks)
	for i, p := range pages {
		if p.Bookmark == nil {
			continue
		}
		var want [][]any
		for _, r := range all {
			if r[1].(int64) > p.Bookmark.Value.(int64) {
				want = append(want, r)
			}
		}
		require.Equal(t, want, allRows(read(p.Bookmark)), "resume after page %d", i+1)
	}
}

func TestIncrementalExactPagesKeepTiesTogether(t *testing.T) {
	t.Parallel()
	dir, all := ties(t)
	pages, err := readPages(t, execute.ReadRequest{
		Config:      map[string]any{"connection_url": "t.db", "query": "SELECT id, c FROM t", "batch_size": 3},
		BaseDir:     dir,
		Incremental: &execute.Incremental{Cursor: "c", Exact: true},
	})
	require.NoError(t, err)
	require.Equal(t, all, allRows(pages))
	var sizes []int
	var marks []any
	for _, p := range pages {
		sizes = append(sizes, len(p.Rows))
		marks = append(marks, p.Bookmark.Value)
	}
	// c values: [1 2 2 2 2] [3 3 4] [5 5 5 5 5] [6]: a page grows until the value changes,
	// so every bookmark is its page's last value.
	require.Equal(t, []int{5, 3, 5, 1}, sizes)
	require.Equal(t, []any{int64(2), int64(4), int64(5), int64(6)}, marks)
}

func TestIncrementalOnStoredDateTimeText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "d.db"))
	exec(t, db, `CREATE TABLE t (id INTEGER, updated DATETIME)`)
	exec(t, db, `INSERT INTO t VALUES (1, '2025-01-02 03:00:00'), (2, '2025-01-02 04:00:00'), (3, '2025-01-02 05:00:00')`)
	req := func(after *state.Bookmark) execute.ReadRequest {
		return execute.ReadRequest{Config: map[string]any{"connection_url": "d.db", "query": "SELECT * FROM t", "batch_size": 2},
			BaseDir: dir, Incremental: &execute.Incremental{Cursor: "updated", After: after}}
	}
	pages, err := readPages(t, req(nil))
	require.NoError(t, err)
	require.IsType(t, time.Time{}, pages[0].Rows[0][1], "page values keep the driver's decoding")
	// The bookmark holds the value as stored, so comparing it in SQL is exact.
	require.Equal(t, "2025-01-02 04:00:00", pages[0].Bookmark.Value)
	rest, err := readPages(t, req(pages[0].Bookmark))
	require.NoError(t, err)
	require.Len(t, allRows(rest), 1)
	require.Equal(t, []string{"id", "updated"}, rest[0].Columns, "the raw cursor column is not part of the page")
}

func TestIncrementalUnknownCursor(t *testing.T) {
	t.Parallel()
	dir, _ := ties(t)
	_, err := readPages(t, execute.ReadRequest{Config: map[string]any{"connection_url": "t.db", "query": "SELECT id FROM t"},
		BaseDir: dir, Incremental: &execute.Incremental{Cursor: "nope"}})
	require.ErrorContains(t, err, `is the cursor column "nope" a column of the query?`)
}

func TestSourceIsReadOnlyAndNeverCreatesTheFile(t *testing.T) {
	t.Parallel()
	dir, all := ties(t)
	_, err := readPages(t, execute.ReadRequest{Config: map[string]any{"connection_url": "t.db", "query": "DELETE FROM t"}, BaseDir: dir})
	require.Error(t, err)
	require.Len(t, query(t, openDB(t, filepath.Join(dir, "t.db")), "SELECT * FROM t"), len(all))

	_, err = readPages(t, execute.ReadRequest{Config: map[string]any{"connection_url": "sqlite:new.db", "query": "SELECT 1"}, BaseDir: dir})
	require.ErrorContains(t, err, "sqlite: database file "+filepath.Join(dir, "new.db")+" does not exist")
	_, statErr := os.Stat(filepath.Join(dir, "new.db"))
	require.ErrorIs(t, statErr, os.ErrNotExist)
}

func TestConnectionURLForms(t *testing.T) {
	t.Parallel()
	dir, all := ties(t)
	abs := filepath.Join(dir, "t.db")
	for _, u := range []string{"t.db", "sqlite:t.db", "sqlite://t.db", "sqlite://" + abs, "sqlite:" + abs + "?_pragma=foreign_keys(1)"} {
		pages, err := readPages(t, execute.ReadRequest{Config: map[string]any{"connection_url": u, "query": "SELECT id, c FROM t"}, BaseDir: dir})
		require.NoError(t, err, u)
		require.Equal(t, all, allRows(pages), u)
	}
	for u, want := range map[string]string{
		"postgres://u:secret@h/db": "connection_url must be sqlite:PATH",
		"sqlite::memory:":          "must name a database file",
		"sqlite:":                  "must name a database file",
	} {
		_, err := readPages(t, execute.ReadRequest{Config: map[string]any{"connection_url": u, "query": "SELECT 1"}, BaseDir: dir})
		require.ErrorContains(t, err, want)
		require.NotContains(t, err.Error(), "secret")
	}
	_, err := readPages(t, execute.ReadRequest{Config: map[string]any{"connection_url": "t.db", "query": " ; "}, BaseDir: dir})
	require.ErrorContains(t, err, `"query" is required`)
}
