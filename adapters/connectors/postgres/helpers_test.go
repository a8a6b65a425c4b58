package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/postgres"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/tests/testdb"
)

// db is a test's own schema: its URL and a connection to it.
type db struct {
	url  string
	conn *pgx.Conn
}

func newDB(t *testing.T) *db {
	t.Helper()
	url := testdb.Postgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return &db{url: url, conn: conn}
}

func (d *db) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	_, err := d.conn.Exec(context.Background(), sql, args...)
	require.NoError(t, err, sql)
}

// rows returns every row of sql, times in UTC.
func (d *db) rows(t *testing.T, sql string, args ...any) [][]any {
	t.Helper()
	rows, err := d.conn.Query(context.Background(), sql, args...)
	require.NoError(t, err, sql)
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals, err := rows.Values()
		require.NoError(t, err)
		for i, v := range vals {
			if tm, ok := v.(time.Time); ok {
				vals[i] = tm.UTC()
			}
			if n, ok := v.(int32); ok {
				vals[i] = int64(n)
			}
		}
		out = append(out, vals)
	}
	require.NoError(t, rows.Err())
	return out
}

func (d *db) tableExists(t *testing.T, name string) bool {
	t.Helper()
	var ok bool
	require.NoError(t, d.conn.QueryRow(context.Background(), "SELECT to_regclass($1) IS NOT NULL", name).Scan(&ok))
	return ok
}

// read opens a source and reads every page.
func read(t *testing.T, req execute.ReadRequest) []*execute.Page {
	t.Helper()
	return conntest.Read(t, postgres.New(), req)
}

// readErr opens and reads a source to the end and returns the first error.
func readErr(req execute.ReadRequest) error {
	return conntest.ReadErr(postgres.New(), req)
}

func allRows(pages []*execute.Page) [][]any {
	return conntest.AllRows(pages)
}

// sinkRun writes pages with a fresh sink and commits; the first failure aborts.
func sinkRun(t *testing.T, cfg map[string]any, pages ...*execute.Page) error {
	t.Helper()
	return conntest.SinkRun(t, postgres.New(), execute.WriteRequest{Config: cfg}, pages...)
}

func page(cols []string, rows ...[]any) *execute.Page {
	return conntest.Page(cols, rows...)
}

func utc(s string) time.Time {
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return tm.UTC()
}

func newSource(t *testing.T, url, query string, batch int) (execute.Source, error) {
	t.Helper()
	return postgres.New().OpenSource(context.Background(), execute.ReadRequest{BatchSize: batch,
		Config: map[string]any{"connection_url": url, "query": query}})
}

// schema is the test's own schema (the URL's search_path).
func (d *db) schema(t *testing.T) string {
	t.Helper()
	var s string
	require.NoError(t, d.conn.QueryRow(context.Background(), "SELECT current_schema()").Scan(&s))
	return s
}
