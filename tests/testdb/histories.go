package testdb

import (
	"path/filepath"
	"testing"
)

// Histories names the two databases a shared history runs on, each with a function that
// provisions a fresh one for a test: a SQLite file in the test's temporary directory and
// a PostgreSQL schema of its own.
func Histories() map[string]func(t testing.TB) string {
	return map[string]func(t testing.TB) string{
		"sqlite":   func(t testing.TB) string { return "sqlite:" + filepath.Join(t.TempDir(), "history.db") },
		"postgres": Postgres,
	}
}
