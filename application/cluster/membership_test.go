package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
)

// rosterOf is the real history holding members' heartbeats, each aged as given against
// the history's clock (the heartbeat is stored, then moved back by its age).
func rosterOf(t *testing.T, members ...aged) *history {
	t.Helper()
	ctx := context.Background()
	h := newHistory(t)
	for _, m := range members {
		require.NoError(t, h.Store.Heartbeat(ctx, m.row))
		_, err := h.DB().NewRaw("UPDATE sluice_members SET heartbeat_at = heartbeat_at - ? WHERE instance_id = ?",
			m.age.Milliseconds(), m.row.InstanceID).Exec(ctx)
		require.NoError(t, err)
	}
	return h
}

// aged is a member's heartbeat row and how long ago it was written.
type aged struct {
	row cluster.MemberRow
	age time.Duration
}

type fixedSelf cluster.MemberRow

func (s fixedSelf) Row() cluster.MemberRow { return cluster.MemberRow(s) }

func heartbeat(id string, age time.Duration, pools []string, inFlight int) aged {
	return aged{row: cluster.MemberRow{InstanceID: id, Listen: id + ":8080", Pools: pools, MaxConcurrent: 8,
		InFlight: inFlight}, age: age}
}

func TestMembershipViewListsLiveMembers(t *testing.T) {
	t.Parallel()
	self := fixedSelf{InstanceID: "b", Listen: "b:8080", Pools: []string{"gpu"}, MaxConcurrent: 2, InFlight: 2}
	roster := rosterOf(t,
		heartbeat("a", time.Second, []string{"default"}, 1),
		heartbeat("b", 5*time.Second, []string{"gpu"}, 0), // this member's stored row is older than its state
		heartbeat("legacy", time.Second, nil, 3),
		heartbeat("stale", 31*time.Second, []string{"default"}, 1),
	)
	m, err := cluster.NewMembership(roster, 30*time.Second, self)
	require.NoError(t, err)
	v, err := m.View(context.Background())
	require.NoError(t, err)
	require.Equal(t, cluster.View{Enabled: true, Instances: 3, Pools: []string{"gpu"}, Members: []cluster.MemberView{
		{InstanceID: "a", Listen: "a:8080", Pools: []string{"default"}, InFlight: 1, MaxConcurrent: 8},
		{InstanceID: "b", Listen: "b:8080", Pools: []string{"gpu"}, InFlight: 2, MaxConcurrent: 2},
		{InstanceID: "legacy", Listen: "legacy:8080", Pools: nil, InFlight: 3, MaxConcurrent: 8},
	}}, v)
	require.Nil(t, v.Members[2].Pools, "a member without pool support shows null")
}

func TestMembershipViewAddsItselfBeforeItsFirstHeartbeat(t *testing.T) {
	t.Parallel()
	self := fixedSelf{InstanceID: "a0", Listen: "a0:8080", MaxConcurrent: 1}
	m, err := cluster.NewMembership(rosterOf(t, heartbeat("z", 0, []string{"default"}, 0)), 30*time.Second, self)
	require.NoError(t, err)
	v, err := m.View(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, v.Instances)
	require.Equal(t, "a0", v.Members[0].InstanceID, "sorted by instance id")
	require.Nil(t, v.Pools)
}

func TestMembershipViewFailsWhenTheHistoryDoesNotAnswer(t *testing.T) {
	t.Parallel()
	h := rosterOf(t)
	h.down.Store(true)
	m, err := cluster.NewMembership(h, time.Second, fixedSelf{InstanceID: "a"})
	require.NoError(t, err)
	_, err = m.View(context.Background())
	require.ErrorContains(t, err, "read the membership: connection refused")
}

func TestNewMembershipRefusesMissingParts(t *testing.T) {
	t.Parallel()
	_, err := cluster.NewMembership(nil, 0, nil)
	require.ErrorContains(t, err, "a roster, the member itself, a positive --lease-ttl-secs")
}

func TestSingleView(t *testing.T) {
	t.Parallel()
	v := cluster.SingleView(cluster.MemberRow{InstanceID: "solo", Listen: "127.0.0.1:8080", Pools: []string{"default"},
		MaxConcurrent: 4, InFlight: 1})
	require.Equal(t, cluster.View{Enabled: false, Instances: 1, Pools: []string{"default"}, Members: []cluster.MemberView{
		{InstanceID: "solo", Listen: "127.0.0.1:8080", Pools: []string{"default"}, InFlight: 1, MaxConcurrent: 4}}}, v)
}

// The member is the production Self.
var _ cluster.Self = (*cluster.Member)(nil)
