package testdb_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/testdb"
)

func TestPostgresGivesEachTestItsOwnSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var first string
	t.Run("first", func(t *testing.T) {
		first = testdb.Postgres(t)
		require.Contains(t, first, "search_path=t_")
		conn, err := pgx.Connect(ctx, first)
		require.NoError(t, err)
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "CREATE TABLE probe (id int)")
		require.NoError(t, err)
		var schema string
		require.NoError(t, conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema))
		require.True(t, strings.HasPrefix(schema, "t_"), schema)
	})
	second := testdb.Postgres(t)
	require.NotEqual(t, first, second)
	conn, err := pgx.Connect(ctx, second)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var n int
	require.NoError(t, conn.QueryRow(ctx,
		"SELECT count(*) FROM information_schema.tables WHERE table_name = 'probe' AND table_schema = current_schema()").Scan(&n))
	require.Zero(t, n, "a fresh schema is empty")
	// The first schema was dropped when its test ended.
	firstSchema := first[strings.Index(first, "search_path=")+len("search_path="):]
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", firstSchema).Scan(&n))
	require.Zero(t, n, "schema %s should be dropped", firstSchema)
}

func TestMySQLGivesEachTestItsOwnDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var first string
	t.Run("first", func(t *testing.T) {
		first = testdb.MySQL(t)
		require.True(t, strings.HasPrefix(first, "mysql://"), first)
		cfg, err := testdb.ParseMySQL(first)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(cfg.DBName, "t_"))
		db, err := sql.Open("mysql", cfg.FormatDSN())
		require.NoError(t, err)
		defer db.Close()
		_, err = db.ExecContext(ctx, "CREATE TABLE probe (id int)")
		require.NoError(t, err)
	})
	second := testdb.MySQL(t)
	cfg, err := testdb.ParseMySQL(second)
	require.NoError(t, err)
	db, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	defer db.Close()
	firstCfg, err := testdb.ParseMySQL(first)
	require.NoError(t, err)
	var n int
	require.NoError(t, db.QueryRowContext(ctx,
		"SELECT count(*) FROM information_schema.schemata WHERE schema_name = ?", firstCfg.DBName).Scan(&n))
	require.Zero(t, n, "database %s should be dropped", firstCfg.DBName)
	require.NoError(t, db.QueryRowContext(ctx,
		"SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE()").Scan(&n))
	require.Zero(t, n)
}

func TestParseMySQLAcceptsURLAndDSN(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"mysql://root:pw@127.0.0.1:3306/test?parseTime=true",
		"root:pw@tcp(127.0.0.1:3306)/test?parseTime=true",
	} {
		cfg, err := testdb.ParseMySQL(in)
		require.NoError(t, err, in)
		require.Equal(t, "root", cfg.User)
		require.Equal(t, "pw", cfg.Passwd)
		require.Equal(t, "127.0.0.1:3306", cfg.Addr)
		require.Equal(t, "test", cfg.DBName)
		require.Equal(t, "mysql://root:pw@127.0.0.1:3306/test?parseTime=true", testdb.MySQLURL(cfg))
	}
	cfg, err := testdb.ParseMySQL("mysql://root@db/x")
	require.NoError(t, err)
	require.Equal(t, "db:3306", cfg.Addr, "the default port is filled in")
	_, err = testdb.ParseMySQL("not a dsn at all")
	require.ErrorContains(t, err, testdb.MySQLEnv)
}

func TestWithSearchPath(t *testing.T) {
	t.Parallel()
	got, err := testdb.WithSearchPath("postgres://u@h:5432/db?sslmode=disable", "t_1")
	require.NoError(t, err)
	require.Equal(t, "postgres://u@h:5432/db?search_path=t_1&sslmode=disable", got)
	_, err = testdb.WithSearchPath("postgres://u@h:%zz/db", "t_1")
	require.ErrorContains(t, err, testdb.PostgresEnv)
}
