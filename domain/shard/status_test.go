package shard_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// allowed is SPEC §3's shard lifecycle written out by hand.
var allowed = map[[2]shard.Status]bool{
	{shard.Pending, shard.Running}:   true,
	{shard.Pending, shard.Cancelled}: true,
	{shard.Running, shard.Completed}: true,
	{shard.Running, shard.Failed}:    true,
	{shard.Running, shard.Cancelled}: true,
	{shard.Running, shard.Pending}:   true,
}

func TestTransitionEveryPair(t *testing.T) {
	t.Parallel()
	for _, from := range shard.Statuses() {
		for _, to := range shard.Statuses() {
			want := allowed[[2]shard.Status{from, to}]
			require.Equal(t, want, shard.CanTransition(from, to), "%s -> %s", from, to)

			s := shard.Rehydrate(shard.Snapshot{RunID: "r", Status: from, MaxAttempts: 3, Attempt: 1})
			err := s.Transition(to)
			if want {
				require.NoError(t, err)
				require.Equal(t, to, s.Status())
				continue
			}
			require.ErrorIs(t, err, run.ErrInvalidTransition, "%s -> %s", from, to)
			var te *shard.TransitionError
			require.ErrorAs(t, err, &te)
			require.Equal(t, shard.TransitionError{From: from, To: to}, *te)
			require.Equal(t, from, s.Status())
			require.ErrorContains(t, err, "shard cannot move from "+string(from)+" to "+string(to))
		}
	}
}

func TestStatusHelpers(t *testing.T) {
	t.Parallel()
	for _, s := range shard.Statuses() {
		got, err := shard.ParseStatus(string(s))
		require.NoError(t, err)
		require.Equal(t, s, got)
		// Shard statuses are run statuses of the same name.
		require.True(t, run.Status(s).Valid())
		require.Equal(t, run.Status(s).Terminal(), s.Terminal())
	}
	for _, bad := range []string{"", "sharded", "queued", "RUNNING"} {
		_, err := shard.ParseStatus(bad)
		require.ErrorContains(t, err, "is not a shard status", bad)
	}
}
