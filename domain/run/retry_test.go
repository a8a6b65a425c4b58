package run_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/backoff"
	"github.com/sluicehq/sluice/domain/run"
)

func withRetry(t *testing.T, p run.Retry) *run.Run {
	t.Helper()
	np := params()
	np.MaxAttempts = 10
	np.Retry = &p
	r, err := run.New(np)
	require.NoError(t, err)
	return r
}

func policy(on run.RetryOn, attempts int) run.Retry {
	return run.Retry{MaxAttempts: attempts, On: on,
		Backoff: backoff.Policy{Initial: 10 * time.Second, Max: 600 * time.Second, Multiplier: 2}}
}

var transientErr = run.Failure{Error: &run.Error{Code: run.CodePipelineError, Message: "source http: page 2: 503"}, Transient: true}

func TestFailRetriesTransientThenFailsForGood(t *testing.T) {
	t.Parallel()
	r := withRetry(t, policy(run.RetryTransient, 3))
	// The n-th retry waits within [ceiling/2, ceiling) of 10 s·2^(n-1): draws at both ends.
	bounds := []struct{ lo, hi time.Duration }{{5 * time.Second, 10 * time.Second}, {10 * time.Second, 20 * time.Second}}
	now := at(0)
	for i, b := range bounds {
		require.NoError(t, r.Claim("m1", now))
		lo, err := r.Fail(transientErr, now, 0)
		require.NoError(t, err)
		require.Equal(t, run.Decision{Retry: true, Delay: b.lo}, lo)
		require.Equal(t, run.Pending, r.Status())
		require.Equal(t, now.Add(b.lo), r.NotBefore())
		require.Equal(t, i+1, r.Attempt())
		a := r.Attempts()[i]
		require.Equal(t, run.OutcomeFailed, a.Outcome)
		require.Equal(t, transientErr.Error, a.Error)
		require.Empty(t, r.Owner())

		// Not claimable before it is due; the jitter never goes past the ceiling.
		require.ErrorIs(t, r.Claim("m2", now.Add(b.lo-time.Millisecond)), run.ErrConflict)
		hi := policy(run.RetryTransient, 3).Backoff.Delay(i+1, 0.999999)
		require.Less(t, hi, b.hi)
		require.GreaterOrEqual(t, hi, b.hi-time.Millisecond)
		now = now.Add(b.lo)
	}
	require.NoError(t, r.Claim("m1", now))
	d, err := r.Fail(transientErr, now, 0.5)
	require.NoError(t, err)
	require.False(t, d.Retry, "the third attempt is the last")
	require.Equal(t, run.Failed, r.Status())
	require.Equal(t, transientErr.Error, r.Error())
	require.Len(t, r.Attempts(), 3)
}

func TestFailTransientPolicyDoesNotRetryOthers(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]run.Failure{
		"not transient":           {Error: &run.Error{Code: run.CodePipelineError, Message: "sink: duplicate key"}},
		"config error":            {Error: &run.Error{Code: run.CodeConfigError, Message: "source.table: required"}, Transient: true},
		"timeout":                 {Error: &run.Error{Code: run.CodeTimeout, Message: "timed out"}, Transient: true},
		"host refused under any":  {Error: &run.Error{Code: run.CodeHostRefused, Message: "10.0.0.1"}, Transient: true},
		"path refused, transient": {Error: &run.Error{Code: run.CodePathRefused, Message: "/etc"}, Transient: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			on := run.RetryTransient
			if name == "host refused under any" {
				on = run.RetryAny
			}
			r := withRetry(t, policy(on, 5))
			require.NoError(t, r.Claim("m1", at(1)))
			d, err := r.Fail(f, at(2), 0)
			require.NoError(t, err)
			require.False(t, d.Retry)
			require.Equal(t, run.Failed, r.Status())
		})
	}
}

func TestFailAnyRetriesPlainFailures(t *testing.T) {
	t.Parallel()
	r := withRetry(t, policy(run.RetryAny, 2))
	require.NoError(t, r.Claim("m1", at(1)))
	d, err := r.Fail(run.Failure{Error: &run.Error{Code: run.CodePipelineError, Message: "boom"}}, at(2), 0)
	require.NoError(t, err)
	require.True(t, d.Retry)
}

func TestFailHintAndCancel(t *testing.T) {
	t.Parallel()
	r := withRetry(t, policy(run.RetryTransient, 3))
	require.NoError(t, r.Claim("m1", at(1)))
	f := transientErr
	f.Hint = 90 * time.Second
	d, err := r.Fail(f, at(2), 0)
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, d.Delay, "a longer Retry-After wins")

	// A requested cancel is never retried.
	c := withRetry(t, policy(run.RetryTransient, 3))
	require.NoError(t, c.Claim("m1", at(1)))
	require.NoError(t, c.RequestCancel())
	d, err = c.Fail(transientErr, at(2), 0)
	require.NoError(t, err)
	require.False(t, d.Retry)
	require.Equal(t, run.Failed, c.Status())

	// No policy: a failure is final.
	p := pending(t, 3)
	require.NoError(t, p.Claim("m1", at(1)))
	d, err = p.Fail(transientErr, at(2), 0)
	require.NoError(t, err)
	require.False(t, d.Retry)

	// Only a running run fails an attempt.
	_, err = pending(t, 3).Fail(transientErr, at(2), 0)
	require.ErrorIs(t, err, run.ErrInvalidTransition)
}

func TestRetryValidateNamesTheField(t *testing.T) {
	t.Parallel()
	ok := policy(run.RetryAny, 3)
	require.NoError(t, ok.Validate("retry"))
	for field, mod := range map[string]func(*run.Retry){
		"retry.max_attempts": func(p *run.Retry) { p.MaxAttempts = 0 },
		"retry.on":           func(p *run.Retry) { p.On = "sometimes" },
		"retry.initial_secs": func(p *run.Retry) { p.Backoff.Initial = 0 },
		"retry.max_secs":     func(p *run.Retry) { p.Backoff.Max = time.Second },
		"retry.multiplier":   func(p *run.Retry) { p.Backoff.Multiplier = 0.5 },
	} {
		p := ok
		mod(&p)
		require.ErrorContains(t, p.Validate("retry"), field)
	}
}
