package retry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/reach"
)

// Status marks err, the failure of an HTTP answer with status, as transient when the
// status says a later attempt may succeed (429, 5xx), carrying the answer's Retry-After.
func Status(err error, status int, header http.Header) error {
	if TransientStatus(status) {
		return execute.TransientAfter(err, ParseRetryAfter(header.Get("Retry-After")))
	}
	return err
}

// ParseRetryAfter reads a Retry-After header: seconds or an HTTP date; 0 when absent.
func ParseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// Network marks err, a failed network exchange, as transient when another attempt could
// get past it (a refused, reset or timed-out connection). Confinement refusals stay
// permanent; a cancelled ctx is returned as ctx's error.
func Network(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if reach.CodeOf(err) != "" || execute.IsTransient(err) {
		return err
	}
	if NetworkFailure(err) || errors.Is(err, io.EOF) {
		return execute.Transient(err)
	}
	return err
}

// TransientStatus reports whether an HTTP status says a later attempt may succeed: 408,
// 429 or 5xx. Every connector speaking HTTP (http, file over http, s3) asks this one rule.
func TransientStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// NetworkFailure reports a failed network exchange another attempt could get past: a
// refused, reset or timed-out connection, a broken pipe, a body cut short.
func NetworkFailure(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "connection reset")
}
