package run_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/run"
)

func pending(t *testing.T, maxAttempts int) *run.Run {
	t.Helper()
	p := params()
	p.MaxAttempts = maxAttempts
	r, err := run.New(p)
	require.NoError(t, err)
	return r
}

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func TestClaim(t *testing.T) {
	t.Parallel()
	r := pending(t, 3)
	require.NoError(t, r.Claim("m1", at(1)))
	require.Equal(t, run.Running, r.Status())
	require.Equal(t, 1, r.Attempt())
	require.Equal(t, "m1", r.Owner())
	require.Equal(t, at(1), r.ClaimedAt())
	require.Equal(t, at(1), r.StartedAt())
	require.Equal(t, []run.Attempt{{N: 1, InstanceID: "m1", ClaimedAt: at(1)}}, r.Attempts())
	require.True(t, r.Attempts()[0].Open())

	// A second claim of a running run is refused and changes nothing.
	err := r.Claim("m2", at(2))
	require.ErrorIs(t, err, run.ErrInvalidTransition)
	require.Equal(t, "m1", r.Owner())
	require.Equal(t, 1, r.Attempt())

	require.ErrorContains(t, pending(t, 3).Claim("", at(1)), "instance id")
}

func TestClaimKeepsFirstStart(t *testing.T) {
	t.Parallel()
	r := pending(t, 3)
	require.NoError(t, r.Claim("m1", at(1)))
	require.NoError(t, r.Requeue(at(40)))
	require.NoError(t, r.Claim("m2", at(41)))
	require.Equal(t, at(1), r.StartedAt())
	require.Equal(t, at(41), r.ClaimedAt())
	require.Equal(t, 2, r.Attempt())
}

func TestFinish(t *testing.T) {
	t.Parallel()
	pipelineErr := &run.Error{Code: run.CodePipelineError, Message: "source postgres: page 1: timeout"}
	cases := map[string]struct {
		status run.Status
		err    *run.Error
		want   run.Outcome
	}{
		"completed":           {run.Completed, nil, run.OutcomeCompleted},
		"failed":              {run.Failed, pipelineErr, run.OutcomeFailed},
		"cancelled":           {run.Cancelled, nil, run.OutcomeCancelled},
		"cancelled with note": {run.Cancelled, &run.Error{Code: run.CodeTimeout, Message: "x"}, run.OutcomeCancelled},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := pending(t, 3)
			require.NoError(t, r.Claim("m1", at(1)))
			require.NoError(t, r.Finish(tc.status, tc.err, at(9)))
			require.Equal(t, tc.status, r.Status())
			require.Equal(t, tc.err, r.Error())
			require.Equal(t, at(9), r.FinishedAt())
			require.Empty(t, r.Owner())
			a := r.Attempts()[0]
			require.Equal(t, tc.want, a.Outcome)
			require.Equal(t, at(9), a.EndedAt)
		})
	}
}

func TestFinishRefuses(t *testing.T) {
	t.Parallel()
	perr := &run.Error{Code: run.CodePipelineError}
	cases := map[string]struct {
		claim  bool
		status run.Status
		err    *run.Error
		want   string
	}{
		"non-terminal":          {true, run.Pending, nil, "finish needs a terminal status"},
		"completed with error":  {true, run.Completed, perr, "a completed run carries no error"},
		"failed without error":  {true, run.Failed, nil, "a failed run needs an error code"},
		"unknown code":          {true, run.Failed, &run.Error{Code: "boom"}, `error code "boom" is not a run error code`},
		"pending fails other":   {false, run.Failed, perr, "a pending run can fail only with pool_unavailable"},
		"pending completes":     {false, run.Completed, nil, "run cannot move from pending to completed"},
		"unknown status string": {true, "done", nil, "finish needs a terminal status"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := pending(t, 3)
			if tc.claim {
				require.NoError(t, r.Claim("m1", at(1)))
			}
			before := r.Snapshot()
			require.ErrorContains(t, r.Finish(tc.status, tc.err, at(2)), tc.want)
			require.Equal(t, before, r.Snapshot(), "a refused finish changes nothing")
		})
	}
}

func TestFinishTwiceIsRefused(t *testing.T) {
	t.Parallel()
	r := pending(t, 3)
	require.NoError(t, r.Claim("m1", at(1)))
	require.NoError(t, r.Finish(run.Completed, nil, at(2)))
	before := r.Snapshot()
	err := r.Finish(run.Failed, &run.Error{Code: run.CodePipelineError}, at(3))
	require.ErrorIs(t, err, run.ErrInvalidTransition)
	require.Equal(t, before, r.Snapshot())
}

func TestFinishPendingPoolUnavailable(t *testing.T) {
	t.Parallel()
	r := pending(t, 3)
	e := &run.Error{Code: run.CodePoolUnavailable, Message: `pool "gpu" unserved for 10m0s`}
	require.NoError(t, r.Finish(run.Failed, e, at(600)))
	require.Equal(t, run.Failed, r.Status())
	require.Equal(t, e, r.Error())
	require.Empty(t, r.Attempts(), "no attempt was ever made")
}

func TestFinishSharded(t *testing.T) {
	t.Parallel()
	r := pending(t, 3)
	require.NoError(t, r.Claim("m1", at(1)))
	require.NoError(t, r.MarkSharded())
	require.Equal(t, run.Sharded, r.Status())
	require.Empty(t, r.Owner())
	require.True(t, r.Attempts()[0].Open(), "the planning attempt ends with the parent")

	e := &run.Error{Code: run.CodeShardFailed, Message: "2 of 8 shards failed"}
	require.NoError(t, r.Finish(run.Failed, e, at(50)))
	require.Equal(t, run.OutcomeFailed, r.Attempts()[0].Outcome)
	require.ErrorIs(t, r.MarkSharded(), run.ErrInvalidTransition)
}

func TestCancel(t *testing.T) {
	t.Parallel()
	for _, from := range []run.Status{run.Queued, run.Pending, run.Running, run.Sharded} {
		t.Run(string(from), func(t *testing.T) {
			t.Parallel()
			p := params()
			p.Queued = from == run.Queued
			r, err := run.New(p)
			require.NoError(t, err)
			if from == run.Running || from == run.Sharded {
				require.NoError(t, r.Claim("m1", at(1)))
			}
			if from == run.Sharded {
				require.NoError(t, r.MarkSharded())
			}
			require.NoError(t, r.Cancel(at(5)))
			require.Equal(t, run.Cancelled, r.Status())
			require.Equal(t, at(5), r.FinishedAt())
			require.Nil(t, r.Error())
			for _, a := range r.Attempts() {
				require.Equal(t, run.OutcomeCancelled, a.Outcome)
			}
			require.ErrorIs(t, r.Cancel(at(6)), run.ErrInvalidTransition)
		})
	}
}

func TestRequestCancel(t *testing.T) {
	t.Parallel()
	r := pending(t, 3)
	require.ErrorContains(t, r.RequestCancel(), "run is pending: nothing executes it, so cancel it directly")
	require.False(t, r.CancelRequested())

	require.NoError(t, r.Claim("m1", at(1)))
	require.NoError(t, r.RequestCancel())
	require.NoError(t, r.RequestCancel(), "asking twice is fine")
	require.True(t, r.CancelRequested())
	require.Equal(t, run.Running, r.Status(), "the owner ends it at a page boundary")

	require.NoError(t, r.Cancel(at(2)))
	require.ErrorIs(t, r.RequestCancel(), run.ErrInvalidTransition)

	q := params()
	q.Queued = true
	queued, err := run.New(q)
	require.NoError(t, err)
	require.ErrorContains(t, queued.RequestCancel(), "run is queued")

	s := pending(t, 3)
	require.NoError(t, s.Claim("m1", at(1)))
	require.NoError(t, s.MarkSharded())
	require.NoError(t, s.RequestCancel())
	require.True(t, s.CancelRequested())
}

func TestRequeueAttemptCap(t *testing.T) {
	t.Parallel()
	r := pending(t, 3)
	for i := 1; i <= 2; i++ {
		require.NoError(t, r.Claim("m"+string(rune('0'+i)), at(10*i)))
		require.NoError(t, r.Requeue(at(10*i+5)))
		require.Equal(t, run.Pending, r.Status(), "below the cap it is claimable again")
		require.Equal(t, i, r.Attempt())
		require.Empty(t, r.Owner())
		require.Nil(t, r.Error())
		require.True(t, r.FinishedAt().IsZero())
	}
	require.NoError(t, r.Claim("m3", at(30)))
	require.NoError(t, r.Requeue(at(35)))
	require.Equal(t, run.Failed, r.Status())
	require.Equal(t, run.CodePoisoned, r.Error().Code)
	require.Equal(t, "reclaimed 3 times after its lease expired: the attempt cap of 3 is reached (--cluster-max-attempts)", r.Error().Message)
	require.Equal(t, at(35), r.FinishedAt())
	attempts := r.Attempts()
	require.Len(t, attempts, 3)
	for i, a := range attempts {
		require.Equal(t, i+1, a.N)
		require.Equal(t, run.OutcomeLost, a.Outcome)
	}
}

func TestRequeueCapOfOne(t *testing.T) {
	t.Parallel()
	r := pending(t, 1)
	require.NoError(t, r.Claim("m1", at(1)))
	require.NoError(t, r.Requeue(at(2)))
	require.Equal(t, run.Failed, r.Status())
	require.Contains(t, r.Error().Message, "reclaimed 1 times")
}

func TestRequeueOfCancelRequestedEndsCancelled(t *testing.T) {
	t.Parallel()
	r := pending(t, 3)
	require.NoError(t, r.Claim("m1", at(1)))
	require.NoError(t, r.RequestCancel())
	require.NoError(t, r.Requeue(at(40)))
	require.Equal(t, run.Cancelled, r.Status())
	require.Nil(t, r.Error())
	require.Equal(t, at(40), r.FinishedAt())
	require.Equal(t, run.OutcomeLost, r.Attempts()[0].Outcome)
}

func TestRequeueRefused(t *testing.T) {
	t.Parallel()
	r := pending(t, 3)
	require.ErrorIs(t, r.Requeue(at(1)), run.ErrInvalidTransition)
	require.NoError(t, r.Claim("m1", at(1)))
	require.NoError(t, r.MarkSharded())
	require.ErrorIs(t, r.Requeue(at(2)), run.ErrInvalidTransition, "a sharded parent holds no lease")
	require.Equal(t, run.Sharded, r.Status())
}

func TestHandBackSpendsNoAttempt(t *testing.T) {
	t.Parallel()
	r := pending(t, 1)
	// With a cap of 1, handing back again and again never poisons the run.
	for i := range 5 {
		require.NoError(t, r.Claim("m1", at(10*i)))
		require.Equal(t, 1, r.Attempt())
		require.NoError(t, r.HandBack(at(10*i+1)))
		require.Equal(t, run.Pending, r.Status())
		require.Equal(t, 0, r.Attempt())
		require.Empty(t, r.Owner())
	}
	attempts := r.Attempts()
	require.Len(t, attempts, 5)
	for _, a := range attempts {
		require.Equal(t, 1, a.N)
		require.Equal(t, run.OutcomeHandedBack, a.Outcome)
	}
	require.NoError(t, r.Claim("m2", at(100)))
	require.NoError(t, r.Finish(run.Completed, nil, at(101)))
	require.Equal(t, 1, r.Attempt())
}

func TestHandBackOfCancelRequestedEndsCancelled(t *testing.T) {
	t.Parallel()
	r := pending(t, 3)
	require.NoError(t, r.Claim("m1", at(1)))
	require.NoError(t, r.RequestCancel())
	require.NoError(t, r.HandBack(at(2)))
	require.Equal(t, run.Cancelled, r.Status())
	require.Equal(t, 1, r.Attempt(), "an ended run keeps the attempt it used")
	require.Equal(t, run.OutcomeHandedBack, r.Attempts()[0].Outcome)
	require.Equal(t, at(2), r.FinishedAt())
}

func TestHandBackRefused(t *testing.T) {
	t.Parallel()
	r := pending(t, 3)
	require.ErrorIs(t, r.HandBack(at(1)), run.ErrInvalidTransition)
	require.Equal(t, 0, r.Attempt())
}

func TestPromote(t *testing.T) {
	t.Parallel()
	p := params()
	p.Queued = true
	r, err := run.New(p)
	require.NoError(t, err)
	require.NoError(t, r.Promote())
	require.Equal(t, run.Pending, r.Status())
	require.ErrorIs(t, r.Promote(), run.ErrInvalidTransition)
}

func TestPromoteOnlyAQueuedRun(t *testing.T) {
	t.Parallel()
	p := params()
	p.Queued = true
	q, err := run.New(p)
	require.NoError(t, err)
	require.NoError(t, q.Promote())
	require.Equal(t, run.Pending, q.Status())

	r := pending(t, 3)
	require.NoError(t, r.Claim("m1", at(1)))
	require.ErrorIs(t, r.Promote(), run.ErrInvalidTransition, "a running run is not promoted to pending")
	require.Equal(t, run.Running, r.Status())
	require.ErrorIs(t, pending(t, 3).Promote(), run.ErrInvalidTransition)
}
