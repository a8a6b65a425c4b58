package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/tests/testdb"
)

func TestOpenRefusesUnknownURLsNamingTheFlag(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"", "mysql://root:hunter2@db/x", "sqlite3:/tmp/x", "file:/tmp/x.db", "memory:"} {
		_, err := store.Open(context.Background(), url, store.Options{})
		require.Error(t, err, url)
		msg := err.Error()
		require.Contains(t, msg, "--history")
		for _, form := range []string{"memory", "sqlite:PATH", "sqlite://PATH", "postgres://", "postgresql://"} {
			require.Contains(t, msg, form)
		}
		require.NotContains(t, msg, "hunter2", "credentials never appear in messages")
	}
}

func TestOpenRefusesSQLiteWithoutPath(t *testing.T) {
	t.Parallel()
	for _, url := range []string{"sqlite:", "sqlite://"} {
		_, err := store.Open(context.Background(), url, store.Options{})
		require.ErrorContains(t, err, "--history sqlite: needs a file path")
	}
}

func TestOpenSQLiteForms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, url := range []string{"sqlite:" + filepath.Join(dir, "a.db"), "sqlite://" + filepath.Join(dir, "b.db")} {
		s, err := store.Open(context.Background(), url, store.Options{})
		require.NoError(t, err, url)
		require.Equal(t, store.DialectSQLite, s.Dialect())
		require.Empty(t, s.Schema())
		require.NoError(t, s.Migrate(context.Background()))
		require.NoError(t, s.Close())
	}
	for _, f := range []string{"a.db", "b.db"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
	}
	s, err := store.Open(context.Background(), "memory", store.Options{})
	require.NoError(t, err)
	require.Equal(t, store.DialectSQLite, s.Dialect())
	require.Empty(t, s.WorkChannel(), "SQLite has no NOTIFY")
	require.NoError(t, s.Close())
}

func TestOpenPostgresNeverShowsThePassword(t *testing.T) {
	t.Parallel()
	// Nothing listens on port 1: the connection fails and the message must not carry the
	// password, whichever way the driver words it.
	url := "postgres://sluice:s3cret-pw@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"
	_, err := store.Open(context.Background(), url, store.Options{})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "s3cret-pw")
	require.Contains(t, err.Error(), "--history")

	_, err = store.Open(context.Background(), "postgres://sluice:s3cret-pw@127.0.0.1:1/db?sslmode=bogus", store.Options{})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "s3cret-pw")
}

func TestOpenPostgresRefusesABadSchemaName(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{`a"b`, "has space", "1starts_with_digit", strings.Repeat("x", 64)} {
		_, err := store.Open(context.Background(), "postgres://u@127.0.0.1:1/db", store.Options{Schema: schema})
		require.ErrorContains(t, err, "search_path", schema)
	}
}

func TestOpenPostgresCreatesTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.Postgres(t) // an existing schema t_… in search_path
	s, err := store.Open(ctx, url, store.Options{})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, store.DialectPostgres, s.Dialect())
	require.True(t, strings.HasPrefix(s.Schema(), "t_"), "the URL's search_path is the schema")

	// An explicit schema that does not exist yet is created, and migrations land in it.
	own := s.Schema() + "_own"
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, url)
		if err == nil {
			_, _ = conn.Exec(ctx, `DROP SCHEMA IF EXISTS "`+own+`" CASCADE`)
			_ = conn.Close(ctx)
		}
	})
	other, err := store.Open(ctx, url, store.Options{Schema: own})
	require.NoError(t, err)
	defer other.Close()
	require.Equal(t, own, other.Schema())
	require.NoError(t, other.Migrate(ctx))
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var n int
	require.NoError(t, conn.QueryRow(ctx,
		"SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'sluice_runs'", own).Scan(&n))
	require.Equal(t, 1, n)
	_, pending, err := s.MigrationStatus(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, pending, "the first schema was left alone")
}

func TestLockedErrorWithUnknownHolder(t *testing.T) {
	t.Parallel()
	err := &store.LockedError{}
	require.ErrorIs(t, err, store.ErrLocked)
	require.Contains(t, err.Error(), "holder unknown")
	require.Contains(t, err.Error(), "--history")
}

func TestSQLiteLockFileNamesTheHolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := store.Open(context.Background(), "sqlite:"+path, store.Options{})
	require.NoError(t, err)
	defer s.Close()
	release, err := s.AcquireExclusive(context.Background(), store.Holder{InstanceID: "i-9", Host: "box", PID: 99})
	require.NoError(t, err)
	data, err := os.ReadFile(path + ".lock")
	require.NoError(t, err)
	require.JSONEq(t, `{"instance_id":"i-9","host":"box","pid":99}`, string(data))
	release()
	data, err = os.ReadFile(path + ".lock")
	require.NoError(t, err)
	require.Empty(t, data, "a released lock names nobody")
}

func TestOpenHidesAPasswordGivenAsParameter(t *testing.T) {
	t.Parallel()
	for _, url := range []string{
		"postgres://u@127.0.0.1:1/db?password=q-secret-1&connect_timeout=2",
		"postgresql://u:q-secret-1@127.0.0.1:1/db?connect_timeout=2&sslmode=nonsense",
		"bogus://u:q-secret-1@host/db",
		"bogus://u@host/db?password=q-secret-1",
	} {
		_, err := store.Open(context.Background(), url, store.Options{})
		require.Error(t, err, url)
		require.NotContains(t, err.Error(), "q-secret-1", url)
	}
}

func TestOpenSQLiteNamesAMissingDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "absent")
	_, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "h.db"), store.Options{})
	require.ErrorContains(t, err, "directory "+dir+" does not exist")
}
