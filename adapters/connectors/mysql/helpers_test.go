package mysql_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	drv "github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/mysql"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/tests/testdb"
)

// db is a test's own database: its URL and a handle on it.
type db struct {
	url string
	db  *sql.DB
}

func newDB(t *testing.T) *db {
	t.Helper()
	url := testdb.MySQL(t)
	c, err := testdb.ParseMySQL(url)
	require.NoError(t, err)
	c.ParseTime = true
	c.Loc = time.UTC
	c.Params = map[string]string{"time_zone": "'+00:00'"}
	conn, err := drv.NewConnector(c)
	require.NoError(t, err)
	h := sql.OpenDB(conn)
	t.Cleanup(func() { h.Close() })
	return &db{url: url, db: h}
}

func (d *db) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	_, err := d.db.ExecContext(context.Background(), q, args...)
	require.NoError(t, err, q)
}

// rows returns every row of q; text comes back as string, integers as int64.
func (d *db) rows(t *testing.T, q string, args ...any) [][]any {
	t.Helper()
	rows, err := d.db.QueryContext(context.Background(), q, args...)
	require.NoError(t, err, q)
	defer rows.Close()
	types, err := rows.ColumnTypes()
	require.NoError(t, err)
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(types))
		ptrs := make([]any, len(types))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		for i, v := range vals {
			switch x := v.(type) {
			case []byte:
				switch types[i].DatabaseTypeName() {
				case "BLOB", "VARBINARY", "BINARY", "LONGBLOB":
				default:
					vals[i] = string(x)
				}
			case float32:
				vals[i] = float64(x)
			case time.Time:
				vals[i] = x.UTC()
			}
		}
		out = append(out, vals)
	}
	require.NoError(t, rows.Err())
	return out
}

func (d *db) tableExists(t *testing.T, name string) bool {
	t.Helper()
	return len(d.rows(t, "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", name)) > 0
}

func read(t *testing.T, req execute.ReadRequest) []*execute.Page {
	t.Helper()
	return conntest.Read(t, mysql.New(), req)
}

func readErr(req execute.ReadRequest) error {
	return conntest.ReadErr(mysql.New(), req)
}

func sinkRun(t *testing.T, cfg map[string]any, pages ...*execute.Page) error {
	t.Helper()
	return conntest.SinkRun(t, mysql.New(), execute.WriteRequest{Config: cfg}, pages...)
}

func page(cols []string, rows ...[]any) *execute.Page {
	return conntest.Page(cols, rows...)
}

func ids(pages []*execute.Page) []int64 {
	var out []int64
	for _, p := range pages {
		for _, r := range p.Rows {
			out = append(out, r[0].(int64))
		}
	}
	return out
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}
