package lease_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/lease"
)

func TestDerivedIntervals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ttl                    time.Duration
		renew, timeout, outage time.Duration
	}{
		{30 * time.Second, 10 * time.Second, 5 * time.Second, 20 * time.Second},
		{3 * time.Second, time.Second, 500 * time.Millisecond, 2 * time.Second},
		{10 * time.Second, 3333333333, 1666666666, 6666666666},
	}
	for _, tc := range cases {
		require.Equal(t, tc.renew, lease.RenewInterval(tc.ttl), tc.ttl)
		require.Equal(t, tc.timeout, lease.StatementTimeout(tc.ttl), tc.ttl)
		require.Equal(t, tc.outage, lease.OutageCutoff(tc.ttl), tc.ttl)
		// The outage cutoff falls before the lease can expire, and a renewal fits before it.
		require.Less(t, lease.OutageCutoff(tc.ttl), tc.ttl)
		require.Less(t, lease.RenewInterval(tc.ttl), lease.OutageCutoff(tc.ttl))
	}
}

func TestValidateTTL(t *testing.T) {
	t.Parallel()
	require.NoError(t, lease.ValidateTTL(3*time.Second))
	require.NoError(t, lease.ValidateTTL(30*time.Second))
	for _, bad := range []time.Duration{0, -time.Second, 2 * time.Second, 2999 * time.Millisecond} {
		err := lease.ValidateTTL(bad)
		require.ErrorContains(t, err, "--lease-ttl-secs must be at least 3", bad)
	}
}

func TestValidatePollInterval(t *testing.T) {
	t.Parallel()
	require.NoError(t, lease.ValidatePollInterval(2*time.Second, 30*time.Second))
	require.ErrorContains(t, lease.ValidatePollInterval(30*time.Second, 30*time.Second), "--cluster-poll-secs (30s) must be shorter than --lease-ttl-secs (30s)")
	require.ErrorContains(t, lease.ValidatePollInterval(time.Minute, 30*time.Second), "must be shorter than --lease-ttl-secs")
	require.ErrorContains(t, lease.ValidatePollInterval(0, 30*time.Second), "--cluster-poll-secs must be positive")
}
