package lease_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/lease"
	"github.com/sluicehq/sluice/domain/run"
)

var allowed = map[[2]lease.State]bool{
	{lease.Held, lease.Renewed}:      true,
	{lease.Held, lease.Released}:     true,
	{lease.Held, lease.Expired}:      true,
	{lease.Held, lease.Lost}:         true,
	{lease.Renewed, lease.Renewed}:   true,
	{lease.Renewed, lease.Released}:  true,
	{lease.Renewed, lease.Expired}:   true,
	{lease.Renewed, lease.Lost}:      true,
	{lease.Expired, lease.Reclaimed}: true,
	{lease.Expired, lease.Lost}:      true,
}

func TestTransitionEveryPair(t *testing.T) {
	t.Parallel()
	require.Len(t, lease.States(), 6)
	for _, from := range lease.States() {
		for _, to := range lease.States() {
			want := allowed[[2]lease.State{from, to}]
			require.Equal(t, want, lease.CanTransition(from, to), "%s -> %s", from, to)
			got, err := lease.Transition(from, to)
			if want {
				require.NoError(t, err)
				require.Equal(t, to, got)
				continue
			}
			require.Equal(t, from, got)
			require.ErrorIs(t, err, run.ErrInvalidTransition)
			var te *lease.TransitionError
			require.ErrorAs(t, err, &te)
			require.Equal(t, lease.TransitionError{From: from, To: to}, *te)
			require.ErrorContains(t, err, "lease cannot move from "+string(from)+" to "+string(to))
		}
	}
}

func TestFinal(t *testing.T) {
	t.Parallel()
	for _, s := range lease.States() {
		hasExit := false
		for _, to := range lease.States() {
			hasExit = hasExit || lease.CanTransition(s, to)
		}
		require.Equal(t, !hasExit, s.Final(), s)
	}
}
