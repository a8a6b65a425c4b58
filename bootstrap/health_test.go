package bootstrap_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	apihttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/bootstrap"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	self := cluster.MemberRow{InstanceID: "i-1", Listen: "127.0.0.1:8080", Pools: []string{"default"}, MaxConcurrent: 4}
	down := errors.New("connection refused")
	busy := self
	busy.InFlight = 2
	cases := []struct {
		name      string
		probe     bootstrap.Probe
		view      bootstrap.View
		draining  bool
		maxQueued int
		history   bool
		queue     bool
		drain     bool
	}{
		{"ready", bootstrap.Probe{Queued: 3}, bootstrap.View{Self: busy}, false, 10, true, true, false},
		{"queue at the limit", bootstrap.Probe{Queued: 10}, bootstrap.View{Self: self}, false, 10, true, false, false},
		{"no queue limit", bootstrap.Probe{Queued: 1 << 20}, bootstrap.View{Self: self}, false, 0, true, true, false},
		{"queue count fails", bootstrap.Probe{QueueErr: down}, bootstrap.View{Self: self}, false, 10, true, false, false},
		{"history down", bootstrap.Probe{PingErr: down}, bootstrap.View{Self: self}, false, 10, false, false, false},
		{"renewal failing", bootstrap.Probe{}, bootstrap.View{Self: self, Unhealthy: true}, false, 10, false, false, false},
		{"shutdown flag", bootstrap.Probe{}, bootstrap.View{Self: self}, true, 10, true, true, true},
		{"member drains", bootstrap.Probe{}, bootstrap.View{Self: self, Drain: true}, false, 10, true, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := bootstrap.NewHealth(tc.probe, tc.view, tc.draining, tc.maxQueued).Ready(context.Background())
			require.Equal(t, tc.history, r.HistoryOK)
			require.Equal(t, tc.queue, r.QueueOK)
			require.Equal(t, tc.drain, r.Draining)
			require.False(t, r.Cluster.Enabled)
			require.Equal(t, 1, r.Cluster.Instances)
			require.Equal(t, []string{"default"}, r.Cluster.Pools)
			row := tc.view.Self
			require.Equal(t, []apihttp.Member{{InstanceID: row.InstanceID, Listen: row.Listen, Pools: row.Pools,
				InFlight: row.InFlight, MaxConcurrent: row.MaxConcurrent}}, r.Cluster.Members)
		})
	}
}

func TestClusterHealth(t *testing.T) {
	t.Parallel()
	self := cluster.MemberRow{InstanceID: "i-1", Listen: "127.0.0.1:8081", Pools: []string{"default", "gpu"}, MaxConcurrent: 2}
	peer := cluster.MemberView{InstanceID: "i-2", Listen: "127.0.0.1:8082", Pools: nil, InFlight: 1, MaxConcurrent: 8}
	live := cluster.View{Enabled: true, Instances: 2, Pools: self.Pools, Members: []cluster.MemberView{
		{InstanceID: "i-1", Listen: self.Listen, Pools: self.Pools, MaxConcurrent: 2}, peer}}

	var seen []int
	h := bootstrap.NewClusterHealth(bootstrap.Probe{}, bootstrap.View{Self: self}, false, 10,
		func(context.Context) (cluster.View, error) { return live, nil },
		func(v cluster.View) { seen = append(seen, v.Instances) })
	r := h.Ready(context.Background())
	require.True(t, r.HistoryOK)
	require.True(t, r.Cluster.Enabled)
	require.Equal(t, 2, r.Cluster.Instances)
	require.Equal(t, []string{"default", "gpu"}, r.Cluster.Pools)
	require.Len(t, r.Cluster.Members, 2)
	require.Nil(t, r.Cluster.Members[1].Pools, "a member without pool support shows null")
	require.Equal(t, []int{2}, seen, "the instances gauge follows every read")

	// An unanswered membership read is an unreachable history: 503, and the block still
	// names this member.
	h = bootstrap.NewClusterHealth(bootstrap.Probe{}, bootstrap.View{Self: self}, false, 10,
		func(context.Context) (cluster.View, error) {
			return cluster.View{}, errors.New("read the membership: EOF")
		},
		func(cluster.View) { t.Error("a failed read must not move the gauge") })
	r = h.Ready(context.Background())
	require.False(t, r.HistoryOK)
	require.False(t, r.QueueOK)
	require.True(t, r.Cluster.Enabled)
	require.Equal(t, 1, r.Cluster.Instances)
	require.Equal(t, "i-1", r.Cluster.Members[0].InstanceID)
}

func TestOutboundPolicy(t *testing.T) {
	t.Parallel()
	refused := []string{
		"http://169.254.169.254/latest/meta-data",
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://[fe80::1]/x",
		"ftp://example.com/x.csv",
	}
	for _, u := range refused {
		require.Error(t, bootstrap.OutboundCheck(nil, u), u)
	}
	require.NoError(t, bootstrap.OutboundCheck(nil, "https://example.com/data.csv"))
	require.NoError(t, bootstrap.OutboundCheck(nil, "http://127.0.0.1:9/data.csv"), "loopback is allowed")
	require.NoError(t, bootstrap.OutboundCheck([]string{"169.254.169.254"}, "http://169.254.169.254/x"))

	// The dial checks the address actually dialed, whatever the URL said.
	_, err := bootstrap.OutboundDial(nil, "169.254.169.254:80")
	require.ErrorContains(t, err, "link-local")
	_, err = bootstrap.OutboundDial(nil, "[64:ff9b::a9fe:a9fe]:80")
	require.ErrorContains(t, err, "link-local", "NAT64 forms of the metadata address are refused too")
	_, err = bootstrap.OutboundDial(nil, "localhost:notaport")
	require.Error(t, err)
}
