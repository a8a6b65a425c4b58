package storecontract

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/console"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/runs"
)

// The console keeps its sign-outs in the history.
var _ console.Signouts = (*store.Store)(nil)

func signoutCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a sign-out is seen by every store on the history and recorded once": func(t *testing.T, e *env) {
			now := time.Now()
			revoked, err := e.s.SessionRevoked(e.ctx, "s1")
			require.NoError(t, err)
			require.False(t, revoked, "a session nobody signed out")
			require.NoError(t, e.s.RevokeSession(e.ctx, "s1", now.Add(12*time.Hour), now))
			require.NoError(t, e.s.RevokeSession(e.ctx, "s1", now.Add(12*time.Hour), now), "twice is no error")
			revoked, err = e.s.SessionRevoked(e.ctx, "s1")
			require.NoError(t, err)
			require.True(t, revoked)
			revoked, err = e.s.SessionRevoked(e.ctx, "s2")
			require.NoError(t, err)
			require.False(t, revoked)
			if e.h.Shared {
				other := e.open(t, store.Options{})
				revoked, err = other.SessionRevoked(e.ctx, "s1")
				require.NoError(t, err)
				require.True(t, revoked, "another member sees the sign-out")
			}
		},
		"sign-outs are forgotten once their cookies expired": func(t *testing.T, e *env) {
			now := time.Now()
			require.NoError(t, e.s.RevokeSession(e.ctx, "old", now.Add(time.Hour), now))
			require.NoError(t, e.s.RevokeSession(e.ctx, "young", now.Add(3*time.Hour), now))
			// A later sign-out, two hours on, forgets what expired by then.
			require.NoError(t, e.s.RevokeSession(e.ctx, "new", now.Add(14*time.Hour), now.Add(2*time.Hour)))
			for id, want := range map[string]bool{"old": false, "young": true, "new": true} {
				revoked, err := e.s.SessionRevoked(e.ctx, id)
				require.NoError(t, err)
				require.Equal(t, want, revoked, id)
			}
			// So does the periodic purge.
			_, err := e.s.Purge(e.ctx, runs.PurgeRequest{SignoutsBefore: now.Add(4 * time.Hour)})
			require.NoError(t, err)
			for id, want := range map[string]bool{"young": false, "new": true} {
				revoked, err := e.s.SessionRevoked(e.ctx, id)
				require.NoError(t, err)
				require.Equal(t, want, revoked, id)
			}
		},
	}
}
