package execute

import (
	"errors"
	"time"
)

// TransientError marks a failure that may succeed if tried again: a dropped connection, a
// timeout, an HTTP 429/5xx, a deadlock or serialization failure. Connectors wrap such errors
// so that per-page retries (SPEC §14.4) and run-level retries (`on: transient`, §14.5) can
// tell them from errors that would fail the same way every time.
type TransientError struct {
	Err error
	// RetryAfter is the server's own hint (HTTP Retry-After); zero when it gave none.
	RetryAfter time.Duration
}

func (e *TransientError) Error() string { return e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }

// Transient marks err as transient; nil stays nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &TransientError{Err: err}
}

// TransientAfter marks err as transient with the server's retry hint.
func TransientAfter(err error, after time.Duration) error {
	if err == nil {
		return nil
	}
	return &TransientError{Err: err, RetryAfter: after}
}

// IsTransient reports whether err (or anything it wraps) was marked transient.
func IsTransient(err error) bool {
	var t *TransientError
	return errors.As(err, &t)
}

// RetryAfter returns the retry hint carried by a transient err, if any.
func RetryAfter(err error) (time.Duration, bool) {
	var t *TransientError
	if errors.As(err, &t) && t.RetryAfter > 0 {
		return t.RetryAfter, true
	}
	return 0, false
}
