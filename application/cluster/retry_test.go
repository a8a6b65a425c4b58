package cluster_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/backoff"
	"github.com/sluicehq/sluice/domain/run"
)

// finishTap is the history with every Finish reported on a channel, so a test waits for
// the event instead of polling.
type finishTap struct {
	*history
	done chan cluster.Outcome
}

func (s *finishTap) Finish(ctx context.Context, owner string, ref cluster.Ref, o cluster.Outcome, b runs.CallbackBuilder) error {
	err := s.history.Finish(ctx, owner, ref, o, b)
	if err == nil {
		s.done <- o
	}
	return err
}

type retryMetrics struct {
	fakeMetrics
	retried chan string
}

func (m *retryMetrics) RunRetried(pipeline string) { m.retried <- pipeline }

// retrying is a run with a retry policy that the member claims at the given attempt.
func retrying(id string, attempt int, on run.RetryOn) cluster.Claimed {
	c := claimed(id)
	c.Attempt = attempt - 1 // earlier attempts (history.add); the member's claim adds one
	c.Retry = &run.Retry{MaxAttempts: 3, On: on,
		Backoff: backoff.Policy{Initial: 10 * time.Second, Max: 600 * time.Second, Multiplier: 2}}
	return c
}

// The member asks the domain (run.Run.Fail) and hands its decision to the store: a
// transient failure below the cap is retried after the jittered delay of its attempt, the
// last attempt and a config error are final, and each retry is counted.
func TestMemberDecidesRetriesThroughTheDomain(t *testing.T) {
	t.Parallel()
	transient := &execute.Failure{Code: run.CodePipelineError, Role: execute.RoleSource, Connector: "http", Page: 2,
		Err: execute.TransientAfter(errors.New("503 Service Unavailable"), 0)}
	cases := []struct {
		name  string
		claim cluster.Claimed
		err   error
		want  cluster.Outcome
	}{
		{"first attempt, transient", retrying("r1", 1, run.RetryTransient), transient,
			cluster.Outcome{Retry: true, RetryDelay: 5*time.Second + 2500*time.Millisecond}},
		{"second attempt, transient", retrying("r2", 2, run.RetryTransient), transient,
			cluster.Outcome{Retry: true, RetryDelay: 10*time.Second + 5*time.Second}},
		{"last attempt", retrying("r3", 3, run.RetryTransient), transient, cluster.Outcome{}},
		{"config error", retrying("r4", 1, run.RetryAny),
			&execute.Failure{Code: run.CodeConfigError, Err: errors.New("source.table: required")}, cluster.Outcome{}},
		{"not transient under on: transient", retrying("r5", 1, run.RetryTransient),
			&execute.Failure{Code: run.CodePipelineError, Err: errors.New("duplicate key")}, cluster.Outcome{}},
		{"no policy", claimed("r6"), transient, cluster.Outcome{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &finishTap{history: newHistory(t), done: make(chan cluster.Outcome, 1)}
			store.add(tc.claim)
			runner := &fakeRunner{fn: func(context.Context, execute.Job) (execute.Stats, error) { return execute.Stats{}, tc.err }}
			metrics := &retryMetrics{retried: make(chan string, 1)}
			start(t, store.history, runner, func(_ *cluster.Config, d *cluster.Deps) {
				d.Store = store
				d.Metrics = metrics
				d.Draw = func() float64 { return 0.5 }
			})
			o := <-store.done
			require.Equal(t, string(run.Failed), o.Status, "the store is told failed; Retry says what the domain decided")
			require.Equal(t, tc.want.Retry, o.Retry)
			require.Equal(t, tc.want.RetryDelay, o.RetryDelay)
			rec := store.get(tc.claim.ID)
			last := rec.Attempts[len(rec.Attempts)-1]
			require.Equal(t, run.OutcomeFailed, last.Outcome, "the attempt is recorded failed either way")
			require.NotNil(t, last.Error)
			require.Equal(t, o.ErrorCode, string(last.Error.Code))
			if tc.want.Retry {
				require.Equal(t, "orders", <-metrics.retried)
				require.Equal(t, "pending", rec.Status, "the history returns a retried run to pending")
				require.False(t, rec.NotBefore.IsZero(), "…claimable only after its delay")
				return
			}
			require.Equal(t, "failed", rec.Status)
		})
	}
}

// The claim loop wakes when the retry it scheduled comes due: with a poll interval of an
// hour, the second attempt still starts once the backoff delay has passed.
func TestClaimLoopWakesWhenARetryComesDue(t *testing.T) {
	t.Parallel()
	c := retrying("r1", 1, run.RetryAny)
	c.Retry.Backoff = backoff.Policy{Initial: 40 * time.Millisecond, Max: time.Second, Multiplier: 2}
	store := newHistory(t) // keeps not_before and answers NextDue
	store.add(c)
	attempts := make(chan int, 2)
	var n atomic.Int32
	runner := &fakeRunner{fn: func(context.Context, execute.Job) (execute.Stats, error) {
		k := n.Add(1)
		attempts <- int(k)
		if k == 1 {
			return execute.Stats{}, &execute.Failure{Code: run.CodePipelineError, Err: errors.New("glitch")}
		}
		return execute.Stats{}, nil
	}}
	start(t, store, runner, func(cfg *cluster.Config, d *cluster.Deps) {
		cfg.PollInterval = time.Hour
		d.Clock = nil // the system clock: the due instant is measured on it
		d.Draw = func() float64 { return 0 }
	})
	require.Equal(t, 1, <-attempts)
	require.Equal(t, 2, <-attempts, "the retry was claimed when due, not at the next poll")
	rec := store.ended(t, "r1")
	require.Equal(t, string(run.Completed), rec.Status)
	require.Len(t, rec.Attempts, 2)
	// The attempt's times are kept to the millisecond, so the gap may read a tick short.
	delay := c.Retry.Backoff.Delay(1, 0)
	require.Positive(t, delay)
	require.GreaterOrEqual(t, rec.Attempts[1].ClaimedAt.Sub(rec.Attempts[0].EndedAt), delay-time.Millisecond,
		"not claimed before its delay, by the history's clock")
}
