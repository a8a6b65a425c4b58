package schedule_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/schedule"
)

func TestOverlapPolicy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want schedule.OverlapPolicy
	}{
		{"", schedule.OverlapSkip},
		{"skip", schedule.OverlapSkip},
		{"queue", schedule.OverlapQueue},
	} {
		p, err := schedule.ParseOverlapPolicy(c.in)
		require.NoError(t, err)
		require.Equal(t, c.want, p)
		require.NoError(t, p.Validate())
	}
	for _, bad := range []string{"Skip", "allow", "queue ", "none"} {
		_, err := schedule.ParseOverlapPolicy(bad)
		require.ErrorIs(t, err, schedule.ErrInvalidSchedule)
		require.ErrorContains(t, err, "overlap_policy: ")
		require.ErrorContains(t, err, "is not skip or queue")
	}
	require.Error(t, schedule.OverlapPolicy("").Validate())
}

func TestOverlapDecide(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		policy  schedule.OverlapPolicy
		busy    bool
		outcome schedule.Outcome
		reason  string
	}{
		{schedule.OverlapSkip, false, schedule.OutcomeCreated, ""},
		{schedule.OverlapSkip, true, schedule.OutcomeSkipped, "previous run still active"},
		{schedule.OverlapQueue, false, schedule.OutcomeCreated, ""},
		{schedule.OverlapQueue, true, schedule.OutcomeQueued, ""},
		{schedule.OverlapPolicy("bogus"), true, schedule.OutcomeSkipped, schedule.ReasonOverlap},
	} {
		outcome, reason := c.policy.Decide(c.busy)
		require.Equal(t, c.outcome, outcome, "%s busy=%v", c.policy, c.busy)
		require.Equal(t, c.reason, reason)
	}
}

func TestValidateMaxCatchup(t *testing.T) {
	t.Parallel()
	for _, ok := range []int{1, 2, 999, 1000} {
		require.NoError(t, schedule.ValidateMaxCatchup(ok))
	}
	for _, bad := range []int{-1, 0, 1001, 1 << 30} {
		err := schedule.ValidateMaxCatchup(bad)
		require.ErrorIs(t, err, schedule.ErrInvalidSchedule)
		require.ErrorContains(t, err, "max_catchup_runs: ")
		require.ErrorContains(t, err, "outside 1..1000")
	}
	require.Equal(t, 1, schedule.DefaultMaxCatchup)
}

func TestReasons(t *testing.T) {
	t.Parallel()
	require.Equal(t, "missed while no scheduler was running", schedule.ReasonMissed)
	require.Equal(t, "paused", schedule.ReasonPaused)
	require.Equal(t, "pool unserved: gpu", schedule.ReasonPoolUnserved("gpu"))
}
