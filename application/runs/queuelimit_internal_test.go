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

	require.NoError(t, admitErr(ctx, q))
	require.Equal(t, 1, reads, "the first submission counts")
	queued = 1
	for range 4 { // at most 5 of 10 queued: at least half the limit stays free
		require.NoError(t, admitErr(ctx, q))
		queued++
	}
	require.Equal(t, 1, reads, "far from the limit the last count stands")
	require.NoError(t, admitErr(ctx, q)) // a 6th would pass the half: counts again
	queued++
	require.Equal(t, 2, reads)
	for queued < 10 {
		require.NoError(t, admitErr(ctx, q))
		queued++
	}
	require.ErrorIs(t, admitErr(ctx, q), ErrQueueFull, "exact at the limit")
	reads = 0
	queued = 0 // the runs were claimed
	require.NoError(t, admitErr(ctx, q), "a full queue is counted afresh, never remembered")
	require.Equal(t, 1, reads)

	reads = 0
	queued = 9 // another member filled the queue
	now = now.Add(queueRecheck)
	require.NoError(t, admitErr(ctx, q), "9 < 10")
	require.Equal(t, 1, reads, "a count older than queueRecheck is taken again")
	queued = 10
	require.ErrorIs(t, admitErr(ctx, q), ErrQueueFull)
}

// admitErr is admit's refusal alone.
func admitErr(ctx context.Context, q *queueLimit) error {
	a, err := q.admit(ctx)
	if a.release != nil {
		a.release()
	}
	return err
}

// Near the limit the answer is "exact": the store counts again with the insert, so
// concurrent submits that all passed one count cannot all be stored.
func TestQueueLimitHandsNearLimitDecisionsToTheStore(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000, 0)
	queued := 0
	q := &queueLimit{max: 10, now: func() time.Time { return now },
		count: func(context.Context) (int, error) { return queued, nil }}
	a, err := q.admit(context.Background())
	require.NoError(t, err)
	require.Equal(t, 10, a.limit, "a fresh count is not the insert's: the store decides")
	queued = 1
	fast, err := q.admit(context.Background())
	require.NoError(t, err)
	require.Zero(t, fast.limit, "far from the limit the fast path needs no count")
	queued = 9
	now = now.Add(queueRecheck)
	a, err = q.admit(context.Background())
	require.NoError(t, err)
	require.Equal(t, 10, a.limit)
	require.Equal(t, 1, a.inFlight(), "the run admitted at once may not be stored yet: the store counts it")
	fast.release()
	require.Zero(t, a.inFlight(), "returned, so stored: the store's own count has it")
}

// A submit admitted with a count far from the limit may reach its transaction late;
// the runs admitted at once meanwhile are the store's to count then. The number used to
// be taken at admission (0 here), so the store admitted the late submit past the limit.
func TestQueueLimitLateSubmitSeesRunsAdmittedMeanwhile(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000, 0)
	q := &queueLimit{max: 10, now: func() time.Time { return now },
		count: func(context.Context) (int, error) { return 0, nil }}
	late, err := q.admit(context.Background())
	require.NoError(t, err)
	require.Equal(t, 10, late.limit, "the first submit counts: the store decides")
	var meanwhile []admission
	for range 4 {
		a, err := q.admit(context.Background())
		require.NoError(t, err)
		require.Zero(t, a.limit, "far from the limit: admitted at once")
		meanwhile = append(meanwhile, a)
	}
	require.Equal(t, 4, late.inFlight(), "the store, counting now, must add the 4 not stored yet")
	for _, a := range meanwhile {
		a.release()
	}
	late.release()
}

func TestQueueLimitPassesCountErrorsAndIgnoresNoLimit(t *testing.T) {
	t.Parallel()
	boom := errors.New("history down")
	q := &queueLimit{max: 5, now: time.Now, count: func(context.Context) (int, error) { return 0, boom }}
	require.ErrorIs(t, admitErr(context.Background(), q), boom)
	off := &queueLimit{max: 0, now: time.Now, count: func(context.Context) (int, error) { return 0, boom }}
	require.NoError(t, admitErr(context.Background(), off), "0 = no limit: nothing is counted")
}
