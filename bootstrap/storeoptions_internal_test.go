package bootstrap

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// --poll-only is the setting for connection poolers: no notifications and no prepared
// statements. A single server sends no notifications but may prepare.
func TestStoreOptionsFollowPollOnly(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name                     string
		cluster, pollOnly        bool
		wantPollOnly, wantSimple bool
	}{
		{"cluster", true, false, false, false},
		{"cluster, --poll-only", true, true, true, true},
		{"single server", false, false, true, false},
		{"single server, --poll-only", false, true, true, true},
	} {
		o := storeOptions(&serveSettings{Cluster: tc.cluster, PollOnly: tc.pollOnly, MaxConcurrent: 4}, log)
		require.Equal(t, tc.wantPollOnly, o.PollOnly, tc.name)
		require.Equal(t, tc.wantSimple, o.SimpleProtocol, tc.name)
		require.Equal(t, 4, o.Slots, tc.name)
	}
}

// A history transaction left idle for a renewal interval is ended by PostgreSQL, so a
// frozen member's locks go before its leases can expire.
func TestStoreOptionsEndIdleTransactionsWithinARenewal(t *testing.T) {
	t.Parallel()
	o := storeOptions(&serveSettings{Cluster: true, LeaseTTL: 30 * time.Second}, slog.New(slog.DiscardHandler))
	require.Equal(t, 10*time.Second, o.IdleTxTimeout)
}
