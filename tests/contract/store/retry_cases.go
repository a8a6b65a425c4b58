package storecontract

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/backoff"
	"github.com/sluicehq/sluice/domain/run"
)

// retryPolicy is a run's retry policy of five attempts on transient failures.
var retryPolicy = run.Retry{MaxAttempts: 5, On: run.RetryTransient,
	Backoff: backoff.Policy{Initial: 10 * time.Second, Max: 10 * time.Minute, Multiplier: 2}}

func withRetry(r *runs.Record) {
	p := retryPolicy
	r.Retry = &p
	r.MaxAttempts = p.MaxAttempts
}

// retryIn is a failed outcome the domain decided to retry after delay.
func retryIn(delay time.Duration) cluster.Outcome {
	return cluster.Outcome{Status: "failed", ErrorCode: string(run.CodePipelineError),
		ErrorMessage: "source http: page 2: 503 Service Unavailable", Retry: true, RetryDelay: delay,
		Stats: cluster.Progress{RowsRead: 7, RowsWritten: 5, Pages: 1}}
}

func (e *env) finish(t *testing.T, c cluster.Claimed, o cluster.Outcome, b *builder) {
	t.Helper()
	require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch}, o, b.build))
}

func retryCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a retried attempt returns the run to pending, not claimable before its delay": func(t *testing.T, e *env) {
			c := e.claimOne(t, "flaky", longTTL, withRetry)
			require.Equal(t, &retryPolicy, c.Retry, "the claim carries the policy the member decides with")
			b := &builder{ok: true}
			before := time.Now()
			e.finish(t, c, retryIn(time.Hour), b)

			got := e.get(t, c.ID)
			require.Equal(t, "pending", got.Status)
			require.Equal(t, &retryPolicy, got.Retry)
			require.Empty(t, got.Owner)
			require.True(t, got.FinishedAt.IsZero(), "a retried run has not ended")
			require.WithinDuration(t, before.Add(time.Hour), got.NotBefore, time.Minute)
			require.Equal(t, 1, got.Attempt)
			require.Len(t, got.Attempts, 1)
			a := got.Attempts[0]
			require.Equal(t, run.OutcomeFailed, a.Outcome)
			require.NotZero(t, a.EndedAt)
			require.Equal(t, string(run.CodePipelineError), attemptErr(a).Code)
			require.Equal(t, "source http: page 2: 503 Service Unavailable", attemptErr(a).Message)
			require.Empty(t, b.seen, "no callback: the run did not end")

			none, err := e.s.Claim(e.ctx, e.owner, []string{"default"}, 10, longTTL)
			require.NoError(t, err)
			require.Empty(t, none, "a run waiting for its retry is not claimed before not_before")
			left, ok, err := e.s.NextDue(e.ctx)
			require.NoError(t, err)
			require.True(t, ok)
			require.InDelta(t, time.Hour.Seconds(), left.Seconds(), 60)
		},
		"the claim skips a waiting run and takes the due ones behind it": func(t *testing.T, e *env) {
			waiting := e.claimOne(t, "flaky", longTTL, withRetry)
			e.finish(t, waiting, retryIn(time.Hour), &builder{})
			fresh := e.create(t, rec("p"))
			got, err := e.s.Claim(e.ctx, e.owner, []string{"default"}, 10, longTTL)
			require.NoError(t, err)
			require.Equal(t, []string{fresh.ID}, ids(got))
		},
		"a due retry is claimed as the next attempt": func(t *testing.T, e *env) {
			_, ok, err := e.s.NextDue(e.ctx)
			require.NoError(t, err)
			require.False(t, ok, "nothing waits")
			c := e.claimOne(t, "flaky", longTTL, withRetry)
			e.finish(t, c, retryIn(0), &builder{})
			got, err := e.s.Claim(e.ctx, e.owner, []string{"default"}, 10, longTTL)
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.Equal(t, 2, got[0].Attempt)
			require.Equal(t, c.Epoch+1, got[0].Epoch)
			_, ok, err = e.s.NextDue(e.ctx)
			require.NoError(t, err)
			require.False(t, ok, "a claimed retry no longer waits")

			e.finish(t, got[0], completed(10), &builder{})
			done := e.get(t, c.ID)
			require.Equal(t, "completed", done.Status)
			require.Empty(t, done.ErrorCode)
			require.Len(t, done.Attempts, 2)
			require.Equal(t, run.Outcome("failed"), done.Attempts[0].Outcome)
			require.Equal(t, string(run.CodePipelineError), attemptErr(done.Attempts[0]).Code)
			require.Equal(t, run.Outcome("completed"), done.Attempts[1].Outcome)
			require.Empty(t, attemptErr(done.Attempts[1]).Code)
		},
		"a reclaim keeps the errors of earlier failed attempts": func(t *testing.T, e *env) {
			c := e.claimOne(t, "flaky", longTTL, withRetry)
			e.finish(t, c, retryIn(0), &builder{})
			again, err := e.s.Claim(e.ctx, e.owner, []string{"default"}, 1, 50*time.Millisecond)
			require.NoError(t, err)
			require.Len(t, again, 1)
			got := e.reclaimUntil(t, c.ID, (&builder{}).build)
			require.Equal(t, "requeued", got.Outcome)
			stored := e.get(t, c.ID)
			require.Len(t, stored.Attempts, 2)
			require.Equal(t, run.Outcome("failed"), stored.Attempts[0].Outcome)
			require.Equal(t, string(run.CodePipelineError), attemptErr(stored.Attempts[0]).Code)
			require.Equal(t, "source http: page 2: 503 Service Unavailable", attemptErr(stored.Attempts[0]).Message)
			require.Equal(t, run.Outcome("lost"), stored.Attempts[1].Outcome)
			require.Equal(t, &retryPolicy, stored.Retry)
		},
		// A hand-back rewrites the run from the domain's copy of it (load → verb → save):
		// what the verb does not change must come back as it was stored.
		"a hand-back keeps the errors of earlier failed attempts and gives its attempt back": func(t *testing.T, e *env) {
			c := e.claimOne(t, "flaky", longTTL, withRetry)
			e.finish(t, c, retryIn(0), &builder{})
			again, err := e.s.Claim(e.ctx, e.owner, []string{"default"}, 1, longTTL)
			require.NoError(t, err)
			require.Len(t, again, 1)
			claimed := e.get(t, c.ID)
			require.NoError(t, e.s.HandBack(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: again[0].Epoch},
				cluster.Progress{RowsRead: 4, RowsWritten: 3, Pages: 1}))
			stored := e.get(t, c.ID)
			require.Equal(t, "pending", stored.Status)
			require.Equal(t, 1, stored.Attempt, "a hand-back spends no attempt")
			require.Empty(t, stored.Owner)
			require.True(t, stored.LeaseExpiresAt.IsZero())
			require.True(t, stored.FinishedAt.IsZero())
			require.True(t, stored.NotBefore.IsZero(), "a handed-back run is claimable at once")
			require.Equal(t, claimed.StartedAt, stored.StartedAt)
			require.Equal(t, claimed.ErrorCode, stored.ErrorCode)
			require.Equal(t, int64(3), stored.Stats.RowsWritten)
			require.Equal(t, &retryPolicy, stored.Retry)
			require.Len(t, stored.Attempts, 2)
			require.Equal(t, run.Outcome("failed"), stored.Attempts[0].Outcome)
			require.Equal(t, string(run.CodePipelineError), attemptErr(stored.Attempts[0]).Code)
			require.Equal(t, "source http: page 2: 503 Service Unavailable", attemptErr(stored.Attempts[0]).Message)
			require.Equal(t, run.Outcome("handed_back"), stored.Attempts[1].Outcome)
			require.NotZero(t, stored.Attempts[1].EndedAt)
			require.Empty(t, attemptErr(stored.Attempts[1]).Code)
		},
		"cancel of a run waiting for its retry ends it at once": func(t *testing.T, e *env) {
			c := e.claimOne(t, "flaky", longTTL, withRetry)
			e.finish(t, c, retryIn(time.Hour), &builder{})
			b := &builder{ok: true}
			got, ok, err := e.s.CancelQueued(e.ctx, c.ID, b.build)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, "cancelled", got.Status)
			require.False(t, got.FinishedAt.IsZero())
			require.Len(t, b.seen, 1, "its callback is written with the cancel")
			_, ok, err = e.s.NextDue(e.ctx)
			require.NoError(t, err)
			require.False(t, ok)
		},
		"a retry of a run whose cancel was requested ends it failed": func(t *testing.T, e *env) {
			c := e.claimOne(t, "flaky", longTTL, withRetry)
			require.False(t, e.requestCancel(t, c.ID))
			b := &builder{ok: true}
			e.finish(t, c, retryIn(0), b)
			got := e.get(t, c.ID)
			require.Equal(t, "failed", got.Status)
			require.False(t, got.FinishedAt.IsZero())
			require.Equal(t, run.Outcome("failed"), got.Attempts[0].Outcome)
			require.Len(t, b.seen, 1)
		},
		"a failed shard retried under its run's policy waits, then is claimed again": func(t *testing.T, e *env) {
			e.sharded(t, "p", hashPlan(2), withRetry)
			shards := e.claimShards(t, 2, longTTL)
			require.Len(t, shards, 2)
			require.Equal(t, &retryPolicy, shards[0].Run.Retry)
			b := &builder{ok: true}
			require.Empty(t, e.finishShard(t, shards[0], retryIn(time.Hour), b), "the run goes on")
			require.Empty(t, e.claimShards(t, 2, longTTL), "the shard waits for its retry")
			left, ok, err := e.s.NextDue(e.ctx)
			require.NoError(t, err)
			require.True(t, ok)
			require.Greater(t, left, 50*time.Minute)
			require.Empty(t, e.finishShard(t, shards[1], completed(3), b), "a shard waiting for its retry is unfinished")

			other := e.sharded(t, "q", hashPlan(1), withRetry)
			s := e.claimShards(t, 1, longTTL)
			require.Len(t, s, 1)
			require.Equal(t, other.ID, s[0].Ref.RunID)
			require.Empty(t, e.finishShard(t, s[0], retryIn(0), b))
			again := e.claimShards(t, 1, longTTL)
			require.Len(t, again, 1)
			require.Equal(t, s[0].Ref.Index, again[0].Ref.Index)
			require.Equal(t, 2, again[0].Attempt)
			require.Equal(t, "completed", e.finishShard(t, again[0], completed(1), b))
		},
	}
}

// attemptError is an attempt's error as text, empty when the attempt did not fail.
type attemptError struct{ Code, Message string }

func attemptErr(a run.Attempt) attemptError {
	if a.Error == nil {
		return attemptError{}
	}
	return attemptError{Code: string(a.Error.Code), Message: a.Error.Message}
}
