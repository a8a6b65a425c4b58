package shard_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/backoff"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

var shardPolicy = run.Retry{MaxAttempts: 2, On: run.RetryTransient,
	Backoff: backoff.Policy{Initial: 4 * time.Second, Max: time.Minute, Multiplier: 2}}

var glitch = run.Failure{Error: &run.Error{Code: run.CodePipelineError, Message: "source: 503"}, Transient: true}

// A shard retries under its run's policy like a run: back to pending, due after the
// backoff delay, not claimable before; the last attempt, a run's cancel, no policy or a
// failure the policy does not cover end it failed.
func TestShardFailRetriesUnderItsRunsPolicy(t *testing.T) {
	t.Parallel()
	s := newShard(t, 5)
	require.NoError(t, s.Claim("m1", t0))
	d, err := s.Fail(glitch, &shardPolicy, false, t0, 0)
	require.NoError(t, err)
	require.Equal(t, run.Decision{Retry: true, Delay: 2 * time.Second}, d)
	require.Equal(t, shard.Pending, s.Status())
	require.Equal(t, t0.Add(2*time.Second), s.NotBefore())
	require.Empty(t, s.Owner())
	require.Equal(t, glitch.Error, s.Error())
	require.ErrorIs(t, s.Claim("m2", t0.Add(time.Second)), run.ErrConflict, "not before it is due")

	require.NoError(t, s.Claim("m2", t0.Add(2*time.Second)))
	require.True(t, s.NotBefore().IsZero())
	d, err = s.Fail(glitch, &shardPolicy, false, t0.Add(3*time.Second), 0)
	require.NoError(t, err)
	require.False(t, d.Retry, "the second attempt is the policy's last")
	require.Equal(t, shard.Failed, s.Status())

	for name, fail := range map[string]func(*shard.Shard) (run.Decision, error){
		"run cancelled": func(s *shard.Shard) (run.Decision, error) { return s.Fail(glitch, &shardPolicy, true, t0, 0) },
		"no policy":     func(s *shard.Shard) (run.Decision, error) { return s.Fail(glitch, nil, false, t0, 0) },
		"not covered": func(s *shard.Shard) (run.Decision, error) {
			return s.Fail(run.Failure{Error: &run.Error{Code: run.CodeConfigError, Message: "x"}}, &shardPolicy, false, t0, 0)
		},
	} {
		s := newShard(t, 5)
		require.NoError(t, s.Claim("m1", t0))
		d, err := fail(s)
		require.NoError(t, err, name)
		require.False(t, d.Retry, name)
		require.Equal(t, shard.Failed, s.Status(), name)
	}
	_, err = newShard(t, 5).Fail(glitch, &shardPolicy, false, t0, 0)
	require.ErrorIs(t, err, run.ErrInvalidTransition, "only a running shard fails an attempt")
}
