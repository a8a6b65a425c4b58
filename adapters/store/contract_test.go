package store_test

import (
	"path/filepath"
	"testing"

	storecontract "github.com/sluicehq/sluice/tests/contract/store"
	"github.com/sluicehq/sluice/tests/testdb"
)

func TestStoreContract_SQLite(t *testing.T) {
	t.Parallel()
	storecontract.Run(t, storecontract.Harness{
		NewURL: func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "history.db") },
		Shared: true,
	})
}

func TestStoreContract_Memory(t *testing.T) {
	t.Parallel()
	storecontract.Run(t, storecontract.Harness{
		NewURL: func(*testing.T) string { return "memory" },
	})
}

func TestStoreContract_Postgres(t *testing.T) {
	t.Parallel()
	storecontract.Run(t, storecontract.Harness{
		NewURL: func(t *testing.T) string { return testdb.Postgres(t) },
		Shared: true,
	})
}

// The claims and the finish are prepared statements on PostgreSQL, but text with their
// arguments inline under SimpleProtocol (--poll-only, for poolers): the groups that
// claim and finish run in that form too.
func TestStoreContract_PostgresSimpleProtocol(t *testing.T) {
	t.Parallel()
	storecontract.Run(t, storecontract.Harness{
		NewURL:         func(t *testing.T) string { return testdb.Postgres(t) },
		Shared:         true,
		SimpleProtocol: true,
		Groups:         []string{"lease", "finish batches", "retries", "oracle", "reclaim", "shards", "pools", "admission", "callbacks"},
	})
}
