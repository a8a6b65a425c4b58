package shard_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

var t0 = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

func newShard(t *testing.T, maxAttempts int) *shard.Shard {
	t.Helper()
	s, err := shard.New(shard.NewParams{RunID: "r1", Index: 2, Pool: "gpu", Range: shard.Range{Index: 2, Lo: 10, Hi: 19}, MaxAttempts: maxAttempts})
	require.NoError(t, err)
	return s
}

func TestNew(t *testing.T) {
	t.Parallel()
	s := newShard(t, 3)
	require.Equal(t, shard.Pending, s.Status())
	require.Equal(t, "r1", s.RunID())
	require.Equal(t, 2, s.Index())
	require.Equal(t, "gpu", s.Pool())
	require.Equal(t, shard.Range{Index: 2, Lo: 10, Hi: 19}, s.Range())
	require.Equal(t, 0, s.Attempt())
	require.Equal(t, s.Snapshot(), shard.Rehydrate(s.Snapshot()).Snapshot())
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	ok := shard.NewParams{RunID: "r1", Index: 0, Pool: "default", MaxAttempts: 1}
	cases := map[string]struct {
		edit func(*shard.NewParams)
		want string
	}{
		"no run":         {func(p *shard.NewParams) { p.RunID = "" }, "id of its parent run"},
		"negative index": {func(p *shard.NewParams) { p.Index = -1 }, "shard index -1 is outside 0..4095"},
		"index too big":  {func(p *shard.NewParams) { p.Index = 4096 }, "shard index 4096 is outside"},
		"no pool":        {func(p *shard.NewParams) { p.Pool = "" }, "parent's pool"},
		"empty range":    {func(p *shard.NewParams) { p.Range = shard.Range{Lo: 5, Hi: 4} }, "shard range 5..4 is empty"},
		"no attempts":    {func(p *shard.NewParams) { p.MaxAttempts = 0 }, "max_attempts must be at least 1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := ok
			tc.edit(&p)
			s, err := shard.New(p)
			require.Nil(t, s)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestClaimFinish(t *testing.T) {
	t.Parallel()
	s := newShard(t, 3)
	require.ErrorContains(t, s.Claim("", t0), "instance id")
	require.NoError(t, s.Claim("m1", t0))
	require.Equal(t, shard.Running, s.Status())
	require.Equal(t, 1, s.Attempt())
	require.Equal(t, "m1", s.Owner())
	require.Equal(t, t0, s.ClaimedAt())
	require.ErrorIs(t, s.Claim("m2", t0), run.ErrInvalidTransition)

	require.ErrorContains(t, s.Finish(shard.Pending, nil, t0), "terminal status")
	require.ErrorContains(t, s.Finish(shard.Completed, &run.Error{Code: run.CodeTimeout}, t0), "carries no error")
	require.ErrorContains(t, s.Finish(shard.Failed, nil, t0), "needs an error code")
	require.ErrorContains(t, s.Finish(shard.Failed, &run.Error{Code: "nope"}, t0), `"nope" is not a run error code`)
	require.Equal(t, shard.Running, s.Status())

	e := &run.Error{Code: run.CodePipelineError, Message: "sink postgres: page 2: boom"}
	require.NoError(t, s.Finish(shard.Failed, e, t0.Add(time.Minute)))
	require.Equal(t, shard.Failed, s.Status())
	require.Equal(t, e, s.Error())
	require.Empty(t, s.Owner())
	require.Equal(t, t0.Add(time.Minute), s.FinishedAt())
	require.ErrorIs(t, s.Finish(shard.Completed, nil, t0), run.ErrInvalidTransition)
}

func TestFinishPendingRefused(t *testing.T) {
	t.Parallel()
	s := newShard(t, 3)
	require.ErrorIs(t, s.Finish(shard.Completed, nil, t0), run.ErrInvalidTransition)
	require.NoError(t, s.Cancel(t0), "a pending shard of a cancelled parent is cancelled at once")
	require.Equal(t, shard.Cancelled, s.Status())
	require.ErrorIs(t, s.Cancel(t0), run.ErrInvalidTransition)
}

func TestRequeueCapAndHandBack(t *testing.T) {
	t.Parallel()
	s := newShard(t, 2)
	require.ErrorIs(t, s.Requeue(false, t0), run.ErrInvalidTransition)
	require.ErrorIs(t, s.HandBack(false, t0), run.ErrInvalidTransition)

	require.NoError(t, s.Claim("m1", t0))
	require.NoError(t, s.HandBack(false, t0))
	require.Equal(t, shard.Pending, s.Status())
	require.Equal(t, 0, s.Attempt(), "a hand-back spends no attempt")

	require.NoError(t, s.Claim("m1", t0))
	require.NoError(t, s.Requeue(false, t0))
	require.Equal(t, shard.Pending, s.Status())
	require.Equal(t, 1, s.Attempt())
	require.Empty(t, s.Owner())

	require.NoError(t, s.Claim("m2", t0))
	require.NoError(t, s.Requeue(false, t0.Add(time.Hour)))
	require.Equal(t, shard.Failed, s.Status())
	require.Equal(t, run.CodePoisoned, s.Error().Code)
	require.Equal(t, "shard 2 reclaimed 2 times after its lease expired: the attempt cap of 2 is reached (--cluster-max-attempts)", s.Error().Message)
	require.Equal(t, t0.Add(time.Hour), s.FinishedAt())
}

func TestRequeueAndHandBackOfACancelledRun(t *testing.T) {
	t.Parallel()
	for name, verb := range map[string]func(*shard.Shard) error{
		"requeue":   func(s *shard.Shard) error { return s.Requeue(true, t0) },
		"hand back": func(s *shard.Shard) error { return s.HandBack(true, t0) },
	} {
		s := newShard(t, 3)
		require.NoError(t, s.Claim("m1", t0))
		require.NoError(t, verb(s), name)
		require.Equal(t, shard.Cancelled, s.Status(), "%s: its run's cancel ends the shard", name)
		require.Equal(t, 1, s.Attempt(), name)
		require.Empty(t, s.Owner(), name)
	}
}
