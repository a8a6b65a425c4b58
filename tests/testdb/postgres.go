package testdb

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/testcontainers/testcontainers-go/modules/postgres"
)

// Postgres returns the URL of a fresh, empty PostgreSQL schema for this test: the server
// URL with search_path set to a new schema t_<random>, which is dropped (CASCADE) when
// the test ends. Anything that connects with the URL — the history store, the postgres
// connectors, a sluice process — works inside that schema; the store also derives its
// advisory-lock keys and NOTIFY channels from it.
func Postgres(t testing.TB) string {
	t.Helper()
	base := resolve(t, PostgresEnv, postgresContainer)
	schema := uniqueName(t)
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := exec(ctx, `CREATE SCHEMA "`+schema+`"`); err != nil {
		t.Fatalf("testdb: create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`); err != nil {
			t.Errorf("testdb: drop schema %s: %v", schema, err)
		}
	})
	u, err := WithSearchPath(base, schema)
	if err != nil {
		t.Fatalf("testdb: %v", err)
	}
	return u
}

// WithSearchPath returns rawURL with its search_path parameter set to schema.
func WithSearchPath(rawURL, schema string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("%s is not a URL", PostgresEnv)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// postgresContainer starts one PostgreSQL container per test binary; every test takes
// its own schema in it. The testcontainers reaper removes it when the process exits.
// (A package-level value on purpose: a container per test would cost seconds each.)
var postgresContainer = sync.OnceValues(func() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := postgres.Run(ctx, "postgres:15-alpine",
		postgres.WithDatabase("test"), postgres.WithUsername("postgres"), postgres.WithPassword("postgres"),
		postgres.BasicWaitStrategies())
	if err != nil {
		return "", err
	}
	return c.ConnectionString(ctx, "sslmode=disable")
})
