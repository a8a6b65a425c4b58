package runs_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// stuckStore is a history whose reads never answer before their context ends, as a
// statement the database plans for minutes.
type stuckStore struct{ runs.Store }

func (stuckStore) List(ctx context.Context, _ runs.Filter) ([]*runs.Record, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("list runs: %w: %w", run.ErrUnavailable, ctx.Err())
}

func (stuckStore) Get(ctx context.Context, id string) (*runs.Record, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("get run %s: %w: %w", id, run.ErrUnavailable, ctx.Err())
}

// Every history read serving a request is cancelled at --query-timeout-secs and answers
// ErrQueryTimeout (503 query_timeout), not a request held as long as the database likes.
func TestReadsStopAtTheQueryTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t,
		withConfig(func(c *runs.Config) { c.QueryTimeout = 20 * time.Millisecond }),
		withDeps(func(d *runs.Deps) { d.Store = stuckStore{d.Store} }))
	_, err := h.svc.List(context.Background(), operator, runs.Filter{})
	require.ErrorIs(t, err, runs.ErrQueryTimeout)
	_, err = h.svc.Get(context.Background(), operator, "r1")
	require.ErrorIs(t, err, runs.ErrQueryTimeout)

	// A caller that went away is not a timeout of the history.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = h.svc.List(ctx, operator, runs.Filter{})
	require.False(t, errors.Is(err, runs.ErrQueryTimeout), "%v", err)
}
