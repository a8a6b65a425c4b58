package runs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestQueueLimitCountsOnlyNearTheLimitOrWhenStale(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000, 0)
	queued, reads := 0, 0
	q := &queueLimit{max: 10, now: func() time.Time { return now },
		count: func(context.Context) (int, error) { reads++; return queued, nil }}
	ctx := context.Background()

	require.NoError(t, q.admit(ctx))
	require.Equal(t, 1, reads, "the first submission counts")
	queued = 1
	for range 4 { // at most 5 of 10 queued: at least half the limit stays free
		require.NoError(t, q.admit(ctx))
		queued++
	}
	require.Equal(t, 1, reads, "far from the limit the last count stands")
	require.NoError(t, q.admit(ctx)) // a 6th would pass the half: counts again
	queued++
	require.Equal(t, 2, reads)
	for queued < 10 {
		require.NoError(t, q.admit(ctx))
		queued++
	}
	require.ErrorIs(t, q.admit(ctx), ErrQueueFull, "exact at the limit")
	reads = 0
	queued = 0 // the runs were claimed
	require.NoError(t, q.admit(ctx), "a full queue is counted afresh, never remembered")
	require.Equal(t, 1, reads)

	reads = 0
	queued = 9 // another member filled the queue
	now = now.Add(queueRecheck)
	require.NoError(t, q.admit(ctx), "9 < 10")
	require.Equal(t, 1, reads, "a count older than queueRecheck is taken again")
	queued = 10
	require.ErrorIs(t, q.admit(ctx), ErrQueueFull)
}

func TestQueueLimitPassesCountErrorsAndIgnoresNoLimit(t *testing.T) {
	t.Parallel()
	boom := errors.New("history down")
	q := &queueLimit{max: 5, now: time.Now, count: func(context.Context) (int, error) { return 0, boom }}
	require.ErrorIs(t, q.admit(context.Background()), boom)
	off := &queueLimit{max: 0, now: time.Now, count: func(context.Context) (int, error) { return 0, boom }}
	require.NoError(t, off.admit(context.Background()), "0 = no limit: nothing is counted")
}
