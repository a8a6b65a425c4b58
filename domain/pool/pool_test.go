package pool_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/pool"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, pool.Validate(pool.Default))
	require.NoError(t, pool.Validate("gpu-eu.1"))
	for _, bad := range []string{"", "GPU", "-gpu", "a b"} {
		require.ErrorContains(t, pool.Validate(bad), "pool", bad)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	cases := []struct{ request, config, want string }{
		{"gpu", "private", "gpu"},
		{"gpu", "", "gpu"},
		{"", "private", "private"},
		{"", "", "default"},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, pool.Resolve(tc.request, tc.config), tc)
	}
}

func TestOverride(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		o         pool.Override
		requested string
		template  string
		want      bool
	}{
		"no request":              {pool.Override{}, "", "gpu", true},
		"same pool, no override":  {pool.Override{}, "gpu", "gpu", true},
		"other pool, no override": {pool.Override{}, "private", "gpu", false},
		"any":                     {pool.Override{Any: true}, "private", "gpu", true},
		"listed":                  {pool.Override{Allowed: []string{"a", "private"}}, "private", "gpu", true},
		"not listed":              {pool.Override{Allowed: []string{"a"}}, "private", "gpu", false},
		"default explicitly":      {pool.Override{}, "default", pool.Resolve("", ""), true},
	}
	for name, tc := range cases {
		require.Equal(t, tc.want, tc.o.Permits(tc.requested, tc.template), name)
		err := tc.o.Check(tc.requested, tc.template)
		if tc.want {
			require.NoError(t, err, name)
			continue
		}
		require.ErrorIs(t, err, pool.ErrOverrideDenied, name)
		require.ErrorContains(t, err, `pool "private" is not allowed for this template (its pool is "gpu")`)
		require.ErrorContains(t, err, "pool_override")
	}
	err := pool.Override{Allowed: []string{"a", "b"}}.Check("c", "gpu")
	require.ErrorContains(t, err, "its pool_override allows a, b")
	var de *pool.OverrideDeniedError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "c", de.Requested)
}

func TestAdmit(t *testing.T) {
	t.Parallel()
	require.NoError(t, pool.Admit("gpu", []string{"default", "gpu"}))

	err := pool.Admit("gpu", []string{"private", "default", "private"})
	require.ErrorIs(t, err, pool.ErrUnserved)
	var ue *pool.UnservedError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, "gpu", ue.Pool)
	require.Equal(t, []string{"default", "private"}, ue.Served)
	require.EqualError(t, err, `pool "gpu" is not served by any live member (live members serve default, private): start a member with --pool gpu`)

	err = pool.Admit("default", nil)
	require.EqualError(t, err, `pool "default" is not served by any live member (no live member serves any pool): start a member with --pool default`)
}

func TestTimedOut(t *testing.T) {
	t.Parallel()
	since := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	wait := 10 * time.Minute
	cases := []struct {
		now  time.Time
		wait time.Duration
		want bool
	}{
		{since, wait, false},
		{since.Add(wait - time.Nanosecond), wait, false},
		{since.Add(wait), wait, true},
		{since.Add(time.Hour), wait, true},
		{since.Add(time.Hour), 0, false},            // timeout off
		{since.Add(time.Hour), -time.Second, false}, // timeout off
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, pool.TimedOut(since, tc.now, tc.wait), tc)
	}

	require.Equal(t, pool.PhaseServed, pool.Observe(true, since, since.Add(time.Hour), wait))
	require.Equal(t, pool.PhaseUnserved, pool.Observe(false, since, since.Add(time.Minute), wait))
	require.Equal(t, pool.PhaseTimedOut, pool.Observe(false, since, since.Add(time.Hour), wait))
	require.Equal(t, pool.PhaseUnserved, pool.Observe(false, since, since.Add(time.Hour), 0))
}

func TestUnservedSince(t *testing.T) {
	t.Parallel()
	expiry := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	created := expiry.Add(5 * time.Minute)
	require.Equal(t, created, pool.UnservedSince(expiry, created), "a run created after the pool went dark waits from its creation")
	require.Equal(t, created, pool.UnservedSince(time.Time{}, created), "a pool never served waits from the run's creation")
	require.Equal(t, expiry, pool.UnservedSince(expiry, expiry.Add(-time.Hour)))
}
