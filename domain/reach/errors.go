package reach

import (
	"errors"
	"fmt"
)

// The refusals. Each is a stable request code (422) at submit and a run error code when
// a connector opens its target.
var (
	// ErrPathRefused: a local path outside the allowed directories, or in the refused set.
	ErrPathRefused = errors.New("path refused")
	// ErrHostRefused: a host or address the dial policy does not allow.
	ErrHostRefused = errors.New("host refused")
	// ErrHistoryRefused: the target is the server's own history database.
	ErrHistoryRefused = errors.New("history refused")
)

// Codes of the refusals, as transports and run errors publish them.
const (
	CodePathRefused    = "path_refused"
	CodeHostRefused    = "host_refused"
	CodeHistoryRefused = "history_refused"
)

// RefusedError says what was refused and what to change. Its message names the config
// key path, what the value resolved to (a real path, a host and port, an address —
// never a URL, which may carry credentials) and the flag an operator changes.
type RefusedError struct {
	Kind   error  // ErrPathRefused, ErrHostRefused or ErrHistoryRefused
	Key    string // config key path, e.g. pipeline.source.config.path
	Target string // what the value resolved to
	Reason string
}

func (e *RefusedError) Error() string {
	key := e.Key
	if key == "" {
		key = "target"
	}
	return fmt.Sprintf("%s: %s refused: %s", key, e.Target, e.Reason)
}

// Unwrap makes errors.Is(err, e.Kind) true.
func (e *RefusedError) Unwrap() error { return e.Kind }

// Code is the refusal's stable code.
func (e *RefusedError) Code() string { return CodeOf(e) }

// WithKey returns a copy of e naming key, for a caller that knows the full key path.
func (e *RefusedError) WithKey(key string) *RefusedError {
	c := *e
	c.Key = key
	return &c
}

// CodeOf returns the code of the refusal err wraps, or "" when it wraps none.
func CodeOf(err error) string {
	switch {
	case errors.Is(err, ErrHistoryRefused):
		return CodeHistoryRefused
	case errors.Is(err, ErrPathRefused):
		return CodePathRefused
	case errors.Is(err, ErrHostRefused):
		return CodeHostRefused
	}
	return ""
}
