package historytest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/adapters/store"
)

// Open returns a migrated SQLite history of t's own, closed when t ends.
//
// Migrating a fresh history costs seconds under -race on a busy machine, and a package
// opens one per test, so the first call migrates once and every call opens its own copy
// of that file.
func Open(t testing.TB) *store.Store {
	t.Helper()
	image, err := migratedImage()
	if err != nil {
		t.Fatalf("historytest: migrate a history: %v", err)
	}
	path := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(path, image, 0o600); err != nil {
		t.Fatalf("historytest: %v", err)
	}
	ctx := context.Background()
	s, err := store.Open(ctx, "sqlite:"+path, store.Options{})
	if err != nil {
		t.Fatalf("historytest: open the history: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.CheckSchema(ctx); err != nil {
		t.Fatalf("historytest: the copy is not migrated: %v", err)
	}
	return s
}

var migrated = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "sluice-history-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "history.db")
	ctx := context.Background()
	s, err := store.Open(ctx, "sqlite:"+path, store.Options{})
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.Close(); err != nil { // checkpoints the WAL into the file
		return nil, err
	}
	return os.ReadFile(path)
})

func migratedImage() ([]byte, error) { return migrated() }
