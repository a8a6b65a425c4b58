package runs

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrQueryTimeout: a history read serving a request ran longer than --query-timeout-secs
// and was cancelled (query_timeout, 503). It also wraps the store's error, which is
// run.ErrUnavailable for a cancelled statement; transports must match this one first.
var ErrQueryTimeout = errors.New("the history read took longer than the server's --query-timeout-secs")

// bounded runs one history read under the query timeout (SPEC §14.3): the context
// deadline cancels the statement (pgx sends a cancel request to PostgreSQL; SQLite's
// driver interrupts the statement), so a costly filter cannot pin a database core.
func bounded[T any](ctx context.Context, d time.Duration, read func(context.Context) (T, error)) (T, error) {
	if d <= 0 {
		return read(ctx)
	}
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	v, err := read(rctx)
	if err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return v, fmt.Errorf("%w (%s): %w", ErrQueryTimeout, d, err)
	}
	return v, err
}
