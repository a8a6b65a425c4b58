package member_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/member"
)

var (
	now = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	ttl = 30 * time.Second
)

func TestLive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		heartbeat time.Time
		want      bool
	}{
		{now, true},
		{now.Add(-29 * time.Second), true},
		{now.Add(-ttl + time.Nanosecond), true},
		{now.Add(-ttl), false},
		{now.Add(-time.Hour), false},
		{now.Add(5 * time.Second), true}, // its clock runs ahead of ours
		{time.Time{}, false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, member.Member{HeartbeatAt: tc.heartbeat}.Live(now, ttl), tc.heartbeat)
	}
}

func TestServes(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		m    member.Member
		pool string
		want bool
	}{
		"listed":                   {member.Member{Pools: []string{"default", "gpu"}}, "gpu", true},
		"not listed":               {member.Member{Pools: []string{"gpu"}}, "default", false},
		"draining serves none":     {member.Member{Pools: []string{"gpu"}, Draining: true}, "gpu", false},
		"legacy serves default":    {member.Member{}, "default", true},
		"legacy serves only that":  {member.Member{}, "gpu", false},
		"legacy draining":          {member.Member{Draining: true}, "default", false},
		"empty list is not legacy": {member.Member{Pools: []string{}}, "default", false},
	}
	for name, tc := range cases {
		require.Equal(t, tc.want, tc.m.Serves(tc.pool), name)
	}
	require.True(t, member.Member{}.LegacyPools())
	require.False(t, member.Member{Pools: []string{}}.LegacyPools())
}

func TestFree(t *testing.T) {
	t.Parallel()
	require.Equal(t, 3, member.Member{MaxConcurrent: 4, InFlight: 1}.Free())
	require.Equal(t, 0, member.Member{MaxConcurrent: 4, InFlight: 4}.Free())
	require.Equal(t, 0, member.Member{MaxConcurrent: 2, InFlight: 5}.Free(), "never negative after a lowered limit")
}

func TestServedPools(t *testing.T) {
	t.Parallel()
	members := []member.Member{
		{InstanceID: "a", Pools: []string{"gpu", "default"}, HeartbeatAt: now},
		{InstanceID: "b", Pools: []string{"private", "gpu"}, HeartbeatAt: now.Add(-time.Second)},
		{InstanceID: "c", Pools: []string{"dead"}, HeartbeatAt: now.Add(-time.Minute)},
		{InstanceID: "d", Pools: []string{"leaving"}, HeartbeatAt: now, Draining: true},
		{InstanceID: "e", HeartbeatAt: now}, // legacy
	}
	require.Equal(t, []string{"default", "gpu", "private"}, member.ServedPools(members, now, ttl))
	require.Empty(t, member.ServedPools(nil, now, ttl))
	require.Empty(t, member.ServedPools(members[2:4], now, ttl))

	live := member.Live(members, now, ttl)
	ids := make([]string, len(live))
	for i, m := range live {
		ids[i] = m.InstanceID
	}
	require.Equal(t, []string{"a", "b", "d", "e"}, ids, "a draining member is still live")
}

func TestFormatFloors(t *testing.T) {
	t.Parallel()
	require.Equal(t, 0, member.MinStateFormat(nil))

	live := []member.Member{
		{InstanceID: "new", StateFormatMax: 2, VaultFormatMax: 3},
		{InstanceID: "old", StateFormatMax: 1, VaultFormatMax: 2},
	}
	require.Equal(t, 1, member.MinStateFormat(live))
	require.Equal(t, 2, member.MinStateFormat(live[:1]), "format 2 once the old member is gone")
	require.Equal(t, 1, member.MinStateFormat([]member.Member{{StateFormatMax: 2}, {}}), "not advertised counts as 1")

	below := member.BelowStateFormat(live, 2)
	require.Len(t, below, 1)
	require.Equal(t, "old", below[0].InstanceID)
	require.Empty(t, member.BelowStateFormat(live, 1))
	require.Len(t, member.BelowStateFormat([]member.Member{{}}, 2), 1)
}

func TestLegacy(t *testing.T) {
	t.Parallel()
	live := []member.Member{{InstanceID: "new", Pools: []string{"default"}}, {InstanceID: "old"}}
	legacy := member.Legacy(live)
	require.Len(t, legacy, 1)
	require.Equal(t, "old", legacy[0].InstanceID)
	require.Empty(t, member.Legacy(live[:1]))
}
