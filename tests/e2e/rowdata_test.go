package e2e_test

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/testdb"
)

// SPEC §14.1: a run's error never quotes row data. Each run below fails on a real
// database with a message that echoes values — a duplicate key, a cast of another
// table's rows (the injection of the issue), MariaDB's duplicate entry — and the run
// resource and its log must name the columns and constraints only.
func TestRunErrorsNeverQuoteRowData(t *testing.T) {
	t.Parallel()
	const rowSecret = "row-Secret-4711"
	const otherTenant = "other-Tenant-Secret"
	pg := testdb.Postgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg)
	require.NoError(t, err)
	defer conn.Close(ctx)
	for _, stmt := range []string{
		"CREATE TABLE keyed (id text PRIMARY KEY, v text)",
		"INSERT INTO keyed VALUES ('" + rowSecret + "', 'x')",
		"CREATE TABLE other_tenant_table (v text)",
		"INSERT INTO other_tenant_table VALUES ('" + otherTenant + "')",
	} {
		_, err := conn.Exec(ctx, stmt)
		require.NoError(t, err, stmt)
	}
	my := testdb.MySQL(t)
	mdb, err := sql.Open("mysql", mysqlDSN(t, my))
	require.NoError(t, err)
	defer mdb.Close()
	for _, stmt := range []string{"CREATE TABLE keyed (id VARCHAR(64) PRIMARY KEY, v TEXT)",
		"INSERT INTO keyed VALUES ('" + rowSecret + "', 'x')"} {
		_, err := mdb.ExecContext(ctx, stmt)
		require.NoError(t, err, stmt)
	}

	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil, "--history", "sqlite:"+filepath.Join(dir, "history.db"))
	source := `source: { type: postgres, config: { connection_url: "` + pg + `", query: "SELECT '` + rowSecret + `' AS id, 'y' AS v" } }`
	cases := map[string]struct {
		config string
		keep   string
	}{
		"postgres duplicate key": {`version: 1
name: dup-pg
pipeline:
  ` + source + `
  sink: { type: postgres, config: { connection_url: "` + pg + `", table_name: keyed, write_mode: append } }
`, "keyed_pkey"},
		"postgres cast of another table": {`version: 1
name: inject
pipeline:
  source: { type: postgres, config: { connection_url: "` + pg + `", query: "SELECT 1 AS id WHERE 1 = CAST((SELECT string_agg(v, ',') FROM other_tenant_table) AS int)" } }
  sink: { type: stdout }
`, "invalid input syntax for type integer"},
		"mariadb duplicate entry": {`version: 1
name: dup-my
pipeline:
  ` + source + `
  sink: { type: mysql, config: { connection_url: "` + my + `", table_name: keyed, write_mode: append } }
`, "Duplicate entry"},
	}
	for name, c := range cases {
		id := s.submit(t, map[string]any{"config": c.config})
		failed := s.waitStatus(t, id, "failed", time.Minute)
		require.NotNil(t, failed.Error, name)
		require.Contains(t, failed.Error.Message, c.keep, "%s: the message still names the problem", name)
		require.NotContains(t, failed.Error.Message, rowSecret, name)
		require.NotContains(t, failed.Error.Message, otherTenant, name)
		code, logs := s.call(t, "GET", "/v1/runs/"+id+"/logs", s.token, nil)
		require.Equal(t, http.StatusOK, code)
		require.NotContains(t, string(logs), rowSecret, "%s: the run's log", name)
		require.NotContains(t, string(logs), otherTenant, "%s: the run's log", name)
	}
	s.stop(t)
}

// mysqlDSN turns testdb's mysql:// URL into the driver's DSN.
func mysqlDSN(t *testing.T, url string) string {
	t.Helper()
	cfg, err := testdb.ParseMySQL(url)
	require.NoError(t, err)
	return cfg.FormatDSN()
}
