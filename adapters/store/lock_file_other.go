//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package store

import (
	"context"
	"errors"
)

var errNoFileLock = errors.New("a SQLite file history needs flock, which this operating system lacks: use --history postgres://…")

func lockFile(string, Holder) (func(), error) { return nil, errNoFileLock }

func sharedLockFile(string) (func(), error) { return nil, errNoFileLock }

func waitFileLock(context.Context, string) (func(), error) { return nil, errNoFileLock }
