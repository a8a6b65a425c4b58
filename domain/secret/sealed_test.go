package secret_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/secret"
)

func TestSealedTransitionEveryPair(t *testing.T) {
	t.Parallel()
	allowed := map[[2]secret.State]bool{
		{secret.Sealed, secret.Opened}:  true,
		{secret.Sealed, secret.Deleted}: true,
		{secret.Opened, secret.Opened}:  true,
		{secret.Opened, secret.Sealed}:  true,
		{secret.Opened, secret.Deleted}: true,
	}
	require.Len(t, secret.States(), 3)
	for _, from := range secret.States() {
		for _, to := range secret.States() {
			want := allowed[[2]secret.State{from, to}]
			require.Equal(t, want, secret.CanTransition(from, to), "%s -> %s", from, to)
			got, err := secret.Transition(from, to)
			if want {
				require.NoError(t, err)
				require.Equal(t, to, got)
				continue
			}
			require.Equal(t, from, got)
			require.ErrorIs(t, err, run.ErrInvalidTransition)
			var te *secret.TransitionError
			require.ErrorAs(t, err, &te)
			require.ErrorContains(t, err, "sealed secret cannot move from "+string(from)+" to "+string(to))
		}
	}
}
