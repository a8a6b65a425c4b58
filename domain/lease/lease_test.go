package lease_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/lease"
	"github.com/sluicehq/sluice/domain/run"
)

var t0 = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

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

func TestExpiry(t *testing.T) {
	t.Parallel()
	l := lease.Grant("m1", 4, t0, 30*time.Second)
	require.Equal(t, lease.Lease{Owner: "m1", Epoch: 5, ExpiresAt: t0.Add(30 * time.Second)}, l)

	cases := []struct {
		now       time.Time
		expired   bool
		remaining time.Duration
	}{
		{t0, false, 30 * time.Second},
		{t0.Add(29*time.Second + 999*time.Millisecond), false, time.Millisecond},
		{t0.Add(30 * time.Second), true, 0}, // expires_at > now is false at the instant itself
		{t0.Add(time.Hour), true, 0},
		{t0.Add(-time.Second), false, 31 * time.Second}, // a clock behind the database's
	}
	for _, tc := range cases {
		require.Equal(t, tc.expired, l.Expired(tc.now), tc.now)
		require.Equal(t, tc.remaining, l.Remaining(tc.now), tc.now)
	}
}

func TestPermits(t *testing.T) {
	t.Parallel()
	l := lease.Lease{Owner: "m1", Epoch: 7, ExpiresAt: t0.Add(10 * time.Second)}
	require.True(t, l.Permits("m1", 7, t0))
	require.False(t, l.Permits("m2", 7, t0), "another owner")
	require.False(t, l.Permits("m1", 6, t0), "a stale epoch from an earlier claim")
	require.False(t, l.Permits("m1", 8, t0), "an epoch from the future")
	require.False(t, l.Permits("m1", 7, t0.Add(10*time.Second)), "expired")
	require.False(t, lease.Lease{}.Permits("", 0, t0), "an unowned item fences everyone")
}

func TestRenew(t *testing.T) {
	t.Parallel()
	l := lease.Grant("m1", 0, t0, 30*time.Second)
	r, err := l.Renew(t0.Add(10*time.Second), 30*time.Second)
	require.NoError(t, err)
	require.Equal(t, lease.Lease{Owner: "m1", Epoch: 1, ExpiresAt: t0.Add(40 * time.Second)}, r)

	_, err = l.Renew(t0.Add(30*time.Second), 30*time.Second)
	require.ErrorIs(t, err, run.ErrLeaseLost)
	require.ErrorContains(t, err, "lease of m1 at epoch 1 expired at 2025-03-01T00:00:30Z")
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
