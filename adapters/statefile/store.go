package statefile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

// Format is the version of the file layout this package writes and reads.
const Format = 2

var _ execute.StateStore = (*Store)(nil)

// Store is a state file. It is safe for concurrent use by goroutines and processes.
type Store struct {
	path string
	lock string
	// mu serialises goroutines of this process; the flock only serialises processes
	// (flock is per open file description, so two goroutines would not exclude each other).
	mu sync.Mutex
}

// file is the on-disk layout. Bookmarks are kept as raw state envelopes so the file can
// be read by anything that reads state.Decode's formats.
type file struct {
	Format    int                        `json:"format"`
	Bookmarks map[string]json.RawMessage `json:"bookmarks"`
}

// Open prepares the state file at path, creating its directory when missing. An existing
// file is read once so a corrupt or too-new file is reported now, not mid-run.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("state file: empty path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	s := &Store{path: path, lock: path + ".lock"}
	err := s.locked(syscall.LOCK_SH, func() error {
		_, err := s.read()
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the state file's location.
func (s *Store) Path() string { return s.path }

// Load returns the bookmark under key, or nil when there is none.
func (s *Store) Load(ctx context.Context, key string) (*state.Bookmark, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out *state.Bookmark
	err := s.locked(syscall.LOCK_SH, func() error {
		f, err := s.read()
		if err != nil {
			return err
		}
		raw, ok := f.Bookmarks[key]
		if !ok {
			return nil
		}
		b, err := state.Decode(raw, "")
		if err != nil {
			return fmt.Errorf("state file %s: bookmark %q: %w", s.path, key, err)
		}
		out = &b
		return nil
	})
	return out, err
}

// Save replaces the bookmark under key. The file is re-read under the exclusive lock, so
// bookmarks another process saved in the meantime are kept.
func (s *Store) Save(ctx context.Context, key string, b state.Bookmark) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	raw, err := state.Encode(b, state.FormatEnvelope)
	if err != nil {
		return fmt.Errorf("state file %s: bookmark %q: %w", s.path, key, err)
	}
	return s.locked(syscall.LOCK_EX, func() error {
		f, err := s.read()
		if err != nil {
			return err
		}
		f.Bookmarks[key] = raw
		return s.write(f)
	})
}

// Keys lists the stored state keys, sorted.
func (s *Store) Keys(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var keys []string
	err := s.locked(syscall.LOCK_SH, func() error {
		f, err := s.read()
		if err != nil {
			return err
		}
		for k := range f.Bookmarks {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return nil
	})
	return keys, err
}

// locked runs f holding the in-process mutex and a flock of the given kind on the sidecar
// lock file. The lock file is never renamed, unlike the state file, so every process
// locks the same inode.
func (s *Store) locked(how int, f func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lf, err := os.OpenFile(s.lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("state file %s: lock: %w", s.path, err)
	}
	defer lf.Close()
	for {
		err = syscall.Flock(int(lf.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("state file %s: lock: %w", s.path, err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too
	return f()
}

func (s *Store) read() (*file, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &file{Format: Format, Bookmarks: map[string]json.RawMessage{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("state file %s: %w", s.path, err)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("state file %s is not valid JSON (%w); move it aside to start over", s.path, err)
	}
	switch {
	case f.Format > Format:
		return nil, fmt.Errorf("state file %s has format %d; this sluice reads up to %d", s.path, f.Format, Format)
	case f.Format < 1:
		return nil, fmt.Errorf("state file %s has no valid \"format\"", s.path)
	}
	if f.Bookmarks == nil {
		f.Bookmarks = map[string]json.RawMessage{}
	}
	f.Format = Format
	return &f, nil
}

// write replaces the file atomically: a reader (or a crash) sees the old file or the new
// one, never a torn one.
func (s *Store) write(f *file) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("state file %s: %w", s.path, err)
	}
	dir := filepath.Dir(s.path)
	tmp, err := os.CreateTemp(dir, ".state-*.tmp")
	if err != nil {
		return fmt.Errorf("state file %s: %w", s.path, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("state file %s: write: %w", s.path, err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("state file %s: %w", s.path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("state file %s: fsync: %w", s.path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("state file %s: %w", s.path, err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("state file %s: rename: %w", s.path, err)
	}
	done = true
	// fsync the directory so the rename itself survives a crash.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
