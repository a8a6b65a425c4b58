package statefile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/statefile"
	"github.com/sluicehq/sluice/domain/state"
)

func TestSaveAndLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "state.json")
	s, err := statefile.Open(path)
	require.NoError(t, err)
	require.Equal(t, path, s.Path())

	b, err := s.Load(ctx, "_/orders")
	require.NoError(t, err)
	require.Nil(t, b, "no bookmark yet")

	require.NoError(t, s.Save(ctx, "_/orders", state.Bookmark{Cursor: "id", Value: int64(42)}))
	require.NoError(t, s.Save(ctx, "acme/events", state.Bookmark{Cursor: "at", Value: "2026-01-02T03:04:05Z"}))
	require.NoError(t, s.Save(ctx, "_/orders", state.Bookmark{Cursor: "id", Value: int64(43)}))

	// A second store on the same file (another process) reads what the first saved.
	other, err := statefile.Open(path)
	require.NoError(t, err)
	b, err = other.Load(ctx, "_/orders")
	require.NoError(t, err)
	require.Equal(t, &state.Bookmark{Cursor: "id", Value: int64(43)}, b)
	b, err = other.Load(ctx, "acme/events")
	require.NoError(t, err)
	require.Equal(t, &state.Bookmark{Cursor: "at", Value: "2026-01-02T03:04:05Z"}, b)
	keys, err := other.Keys(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"_/orders", "acme/events"}, keys)

	var onDisk struct {
		Format    int                        `json:"format"`
		Bookmarks map[string]json.RawMessage `json:"bookmarks"`
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &onDisk))
	require.Equal(t, 2, onDisk.Format)
	require.JSONEq(t, `{"v":2,"cursor":"id","value":43}`, string(onDisk.Bookmarks["_/orders"]))

	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"state.json", "state.json.lock"}, names, "no temp files left behind")
}

func TestReadsBareFormatOneBookmark(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"format":1,"bookmarks":{"_/a":17}}`), 0o600))
	s, err := statefile.Open(path)
	require.NoError(t, err)
	b, err := s.Load(context.Background(), "_/a")
	require.NoError(t, err)
	require.Equal(t, &state.Bookmark{Value: int64(17)}, b)
}

func TestRefusesBadFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content, msg string
	}{
		{"not json", `{"format":2,`, "is not valid JSON"},
		{"too new", `{"format":3,"bookmarks":{}}`, "has format 3; this sluice reads up to 2"},
		{"no format", `{"bookmarks":{}}`, `has no valid "format"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			_, err := statefile.Open(path)
			require.ErrorContains(t, err, tc.msg)
			require.ErrorContains(t, err, path, "the message names the file")
		})
	}
	_, err := statefile.Open("")
	require.Error(t, err)
}

func TestRefusesUndecodableBookmark(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"format":2,"bookmarks":{"_/a":{"v":9}}}`), 0o600))
	s, err := statefile.Open(path)
	require.NoError(t, err)
	_, err = s.Load(context.Background(), "_/a")
	require.ErrorIs(t, err, state.ErrFormat)
	require.ErrorContains(t, err, `bookmark "_/a"`)
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	s, err := statefile.Open(filepath.Join(t.TempDir(), "state.json"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Save(ctx, "k", state.Bookmark{Value: int64(1)}), context.Canceled)
	_, err = s.Load(ctx, "k")
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.Keys(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

// Two stores on one file exclude each other only through the flock (each has its own
// mutex and lock file descriptor), as two processes would: no save may be lost.
func TestConcurrentStoresKeepEverySave(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.json")
	stores := make([]*statefile.Store, 4)
	for i := range stores {
		s, err := statefile.Open(path)
		require.NoError(t, err)
		stores[i] = s
	}
	const saves = 25
	var wg sync.WaitGroup
	for i, s := range stores {
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range saves {
					key := fmt.Sprintf("store%d/g%d", i, g)
					if err := s.Save(ctx, key, state.Bookmark{Cursor: "id", Value: int64(n)}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	keys, err := stores[0].Keys(ctx)
	require.NoError(t, err)
	require.Len(t, keys, len(stores)*2)
	for _, k := range keys {
		b, err := stores[1].Load(ctx, k)
		require.NoError(t, err)
		require.Equal(t, int64(saves-1), b.Value, k)
	}
}
