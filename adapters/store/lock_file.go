//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// lockFile takes an exclusive, non-blocking flock on path and writes h into it. flock
// belongs to the open file, so the lock is released when the process dies, and two
// stores in one process exclude each other too.
func lockFile(path string, h Holder) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("exclusive lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			var holder Holder
			if data, rerr := os.ReadFile(path); rerr == nil {
				_ = json.Unmarshal(data, &holder) // unknown holder when it has not written yet
			}
			return nil, &LockedError{Holder: holder}
		}
		return nil, fmt.Errorf("exclusive lock %s: %w", path, err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			_ = f.Truncate(0)
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			_ = f.Close()
		})
	}
	if err := writeHolder(f, h); err != nil {
		release()
		return nil, fmt.Errorf("exclusive lock %s: record the holder: %w", path, err)
	}
	return release, nil
}

func writeHolder(f *os.File, h Holder) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	return f.Sync()
}

// sharedLockFile takes a shared, non-blocking flock on path: every clustered member
// holds one, and lockFile (exclusive) is refused while any is held, and vice versa.
func sharedLockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("shared history lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			var holder Holder
			if data, rerr := os.ReadFile(path); rerr == nil {
				_ = json.Unmarshal(data, &holder)
			}
			return nil, &LockedError{Holder: holder}
		}
		return nil, fmt.Errorf("shared history lock %s: %w", path, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			_ = f.Close()
		})
	}, nil
}

// waitFileLock takes an exclusive flock on path, waiting until ctx ends.
func waitFileLock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
