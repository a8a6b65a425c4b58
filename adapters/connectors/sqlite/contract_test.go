package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/adapters/connectors/sqlite"
	"github.com/sluicehq/sluice/tests/contract/connector"
)

// stored is how SQLite gives back a value the sink wrote.
func stored(v any) any {
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return v
}

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open(sqliteshim.ShimName, path+"?_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func exec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	_, err := db.ExecContext(context.Background(), q, args...)
	require.NoError(t, err)
}

// query returns every row of q with values in column order.
func query(t *testing.T, db *sql.DB, q string, args ...any) [][]any {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		out = append(out, vals)
	}
	require.NoError(t, rows.Err())
	return out
}

func tableExists(t *testing.T, db *sql.DB, name string) bool {
	t.Helper()
	return len(query(t, db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name)) > 0
}

func quoteCols(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = `"` + c + `"`
	}
	return strings.Join(q, ", ")
}

func TestContract(t *testing.T) {
	t.Parallel()
	c := sqlite.New()
	connector.Run(t, connector.Harness{
		Name: "sqlite",
		Spec: c.Spec(),
		NewSource: func(t *testing.T, data connector.Dataset) connector.SourceCase {
			dir := t.TempDir()
			db := openDB(t, filepath.Join(dir, "src.db"))
			exec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, amount REAL, active INTEGER, at TEXT, note TEXT)`)
			for _, r := range data.Rows {
				vals := connector.Map(connector.Dataset{Rows: [][]any{r}}, stored).Rows[0]
				exec(t, db, `INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)`, vals...)
			}
			return connector.SourceCase{
				Source:  c,
				Config:  map[string]any{"connection_url": "sqlite:src.db", "query": "SELECT * FROM t ORDER BY id;"},
				BaseDir: dir,
				Want:    connector.Map(data, stored),
			}
		},
		BrokenSource: func(t *testing.T) connector.BrokenCase {
			dir := t.TempDir()
			db := openDB(t, filepath.Join(dir, "b.db"))
			exec(t, db, `CREATE TABLE t (id INTEGER)`)
			return connector.BrokenCase{Source: c, BaseDir: dir, Want: "no such table: missing",
				Config: map[string]any{"connection_url": "b.db", "query": "SELECT * FROM missing"}}
		},
		NewSink: func(t *testing.T) connector.SinkCase {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.db")
			return connector.SinkCase{
				Sink:    c,
				Config:  map[string]any{"connection_url": "sqlite://out.db", "table_name": "t", "create_table": true},
				BaseDir: dir,
				ReadBack: func(t *testing.T, cols []string) ([][]any, bool) {
					db := openDB(t, path)
					if !tableExists(t, db, "t") {
						return nil, false
					}
					return query(t, db, "SELECT "+quoteCols(cols)+" FROM t ORDER BY rowid"), true
				},
				Normalize: stored,
			}
		},
		Caps: connector.Capabilities{Incremental: true, Upsert: true, Delete: true, Overwrite: true,
			ExactlyOnce: true, ConcurrentCreate: true},
	})
}
