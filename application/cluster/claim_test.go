package cluster_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
)

func TestClaimsUpToCapacityAndNotBeyond(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(ids("r", 10)...)
	runner := &fakeRunner{fn: untilCancelled(1)}
	h := start(t, store, runner, func(c *cluster.Config, _ *cluster.Deps) { c.MaxConcurrent = 3 })

	require.Eventually(t, func() bool { return h.member.InFlight() == 3 }, waitFor, tick)
	// Several claim passes later (each poll interval makes one) nothing more was claimed.
	h.steps.claims.more(t, 3)
	require.Equal(t, 3, h.member.InFlight())
	require.EqualValues(t, 3, runner.started.Load())
	require.Equal(t, 7, store.count("pending"))
	store.mu.Lock()
	require.Equal(t, 3, store.claimCalls[0], "the first claim asks for all free capacity at once")
	store.mu.Unlock()

	// Freeing one slot claims exactly one more.
	require.True(t, h.member.CancelLocal("r000"))
	require.Eventually(t, func() bool { return runner.started.Load() == 4 }, waitFor, tick)
	require.Eventually(t, func() bool { return h.member.InFlight() == 3 }, waitFor, tick)
	runner.mu.Lock()
	require.Equal(t, 3, runner.maxSeen)
	runner.mu.Unlock()
	store.mu.Lock()
	defer store.mu.Unlock()
	for _, n := range store.claimCalls[1:] {
		require.Equal(t, 1, n, "a claim never asks for more than the free capacity")
	}
}

func TestFullBatchClaimsAgainAtOnceAndWakeNudges(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(ids("r", 5)...)
	runner := &fakeRunner{fn: untilCancelled(1)}
	h := start(t, store, runner, func(c *cluster.Config, _ *cluster.Deps) {
		c.MaxConcurrent = 8
		c.ClaimBatch = 2
		c.PollInterval = time.Hour // only a full batch or a Wake can cause another claim
		c.LeaseTTL = 3 * time.Hour
	})

	require.Eventually(t, func() bool { return h.member.InFlight() == 5 }, waitFor, tick)
	h.steps.claims.reach(t, 3)
	require.Equal(t, []int{2, 2, 2}, store.claims())

	// The last batch was not full: the loop waits for a wake-up (the poll is an hour
	// away), so a run added meanwhile stays pending and no pass follows the third.
	store.add(ids("late", 1)...)
	require.Equal(t, 5, h.member.InFlight())
	require.Equal(t, 3, h.steps.claims.count(), "a batch that was not full does not claim again by itself")
	h.member.Wake()
	h.steps.claims.reach(t, 4)
	require.Eventually(t, func() bool { return h.member.InFlight() == 6 }, waitFor, tick)
	require.Equal(t, []int{2, 2, 2, 2}, store.claims(), "the wake-up claimed, nothing else did")
}

func TestWakeNeverBlocks(t *testing.T) {
	t.Parallel()
	h := start(t, newHistory(t), &fakeRunner{fn: succeed(1)}, nil)
	done := make(chan struct{})
	go func() {
		for range 1000 {
			h.member.Wake()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(waitFor):
		t.Fatal("Wake blocked")
	}
}

func TestCompletedRunFinishesWithStatsAndCountsMetrics(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	h := start(t, store, &fakeRunner{fn: succeed(7)}, nil)

	rec := store.ended(t, "r1")
	require.Equal(t, string(run.Completed), rec.Status)
	require.Empty(t, rec.ErrorCode)
	require.EqualValues(t, 7, rec.Stats.RowsWritten)
	require.Eventually(t, func() bool { return h.member.InFlight() == 0 }, waitFor, tick)
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	require.Equal(t, 1, h.metrics.claimed)
	require.Equal(t, []string{"orders:completed/ok"}, h.metrics.finished)
}

func TestCancelLocalEndsCancelledKeepingConfirmedRows(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	h := start(t, store, &fakeRunner{fn: untilCancelled(40)}, nil)

	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)
	require.False(t, h.member.CancelLocal("elsewhere"), "a run not executing here is not cancelled here")
	require.True(t, h.member.CancelLocal("r1"))
	rec := store.ended(t, "r1")
	require.Equal(t, string(run.Cancelled), rec.Status)
	require.EqualValues(t, 40, rec.Stats.RowsWritten)
	require.Zero(t, store.handBackCalls.Load())
}

func TestCancelFlagFromPeerIsPolled(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	h := start(t, store, &fakeRunner{fn: untilCancelled(3)}, nil)

	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)
	ended, err := store.RequestCancel(context.Background(), "r1") // on a peer's API
	require.NoError(t, err)
	require.False(t, ended, "a running run ends when its owner stops it")
	rec := store.ended(t, "r1")
	require.Equal(t, string(run.Cancelled), rec.Status)
	require.EqualValues(t, 3, rec.Stats.RowsWritten)
}

func TestReclaimOrphansOnlyWhenExclusive(t *testing.T) {
	t.Parallel()
	for _, exclusive := range []bool{true, false} {
		store := newHistory(t)
		orphan := claimed("orphan")
		orphan.Pool = "elsewhere" // stays put once requeued: the member does not serve it
		store.held(orphan)
		h := start(t, store, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, _ *cluster.Deps) {
			c.Exclusive = exclusive
		})
		// Start returns after the reclaim of orphans, when there is one.
		rec := store.get("orphan")
		h.metrics.mu.Lock()
		reclaimed := slices.Clone(h.metrics.reclaimed)
		h.metrics.mu.Unlock()
		if !exclusive {
			require.Equal(t, "running", rec.Status, "a cluster member never assumes a peer's runs are orphans")
			require.Equal(t, peerOwner.InstanceID, rec.Owner)
			continue
		}
		require.Equal(t, "pending", rec.Status)
		require.Equal(t, []string{"requeued"}, reclaimed)
	}
}

func TestStartFailsWhenOrphansCannotBeReclaimed(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.down.Store(true)
	m, err := cluster.New(cluster.Config{InstanceID: "m1", MaxConcurrent: 1, LeaseTTL: 300 * time.Millisecond,
		PollInterval: 20 * time.Millisecond, Exclusive: true},
		cluster.Deps{Store: store, Loader: &fakeLoader{}, Runner: &fakeRunner{fn: succeed(1)}})
	require.NoError(t, err)
	require.ErrorContains(t, m.Start(context.Background()), "reclaim runs left running")
	require.NoError(t, m.Drain(context.Background()), "a member that never started drains at once")
	m.Stop()
}

func TestStartTwiceIsRefusedAndStopMarksStopped(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	// A long TTL: Stop's MarkStopped is bounded by TTL/6 (50 ms at the harness's 300 ms).
	h := start(t, store, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, _ *cluster.Deps) { c.LeaseTTL = time.Hour })
	require.ErrorContains(t, h.member.Start(context.Background()), "already started")
	require.True(t, store.memberRow("m1").StoppedAt.IsZero())
	h.member.Stop()
	h.member.Stop() // idempotent
	require.False(t, store.memberRow("m1").StoppedAt.IsZero(), "the stop is recorded")
	store.mu.Lock()
	defer store.mu.Unlock()
	require.Equal(t, []string{"m1"}, store.stopped, "once")
}

func TestHeartbeatDescribesTheMember(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	start(t, store, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, _ *cluster.Deps) {
		c.Pools = []string{"gpu", "default"}
		c.StateFormatMax = 2
		c.VaultFormatMax = 1
	})
	// Start returns after the first heartbeat is stored.
	hb := store.memberRow("m1")
	require.Equal(t, "m1", hb.InstanceID)
	require.Equal(t, "127.0.0.1:8080", hb.Listen)
	require.Equal(t, []string{"gpu", "default"}, hb.Pools)
	require.Equal(t, 4, hb.MaxConcurrent)
	require.Equal(t, 2, hb.StateFormatMax)
	require.False(t, hb.Draining)
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	good := cluster.Config{InstanceID: "m1", MaxConcurrent: 1, LeaseTTL: 3 * time.Second, PollInterval: time.Second}
	deps := cluster.Deps{Store: newHistory(t), Loader: &fakeLoader{}, Runner: &fakeRunner{}}
	cases := []struct {
		name string
		edit func(*cluster.Config, *cluster.Deps)
		want string
	}{
		{"no instance id", func(c *cluster.Config, _ *cluster.Deps) { c.InstanceID = "" }, "InstanceID"},
		{"no capacity", func(c *cluster.Config, _ *cluster.Deps) { c.MaxConcurrent = 0 }, "--max-concurrent-runs"},
		{"no ttl", func(c *cluster.Config, _ *cluster.Deps) { c.LeaseTTL = 0 }, "--lease-ttl-secs"},
		{"no poll", func(c *cluster.Config, _ *cluster.Deps) { c.PollInterval = 0 }, "--cluster-poll-secs"},
		{"negative grace", func(c *cluster.Config, _ *cluster.Deps) { c.ShutdownGrace = -1 }, "--shutdown-grace-secs"},
		{"no store", func(_ *cluster.Config, d *cluster.Deps) { d.Store = nil }, "Deps.Store"},
		{"no runner", func(_ *cluster.Config, d *cluster.Deps) { d.Runner = nil }, "Deps.Runner"},
		{"outbox without deliverer", func(_ *cluster.Config, d *cluster.Deps) { d.Outbox = newHistory(t) }, "Deps.Deliverer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, d := good, deps
			tc.edit(&c, &d)
			_, err := cluster.New(c, d)
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err := cluster.New(good, deps)
	require.NoError(t, err)
}

// The executor is the production Runner.
var _ cluster.Runner = (*execute.Executor)(nil)

func TestBackloggedMemberGathersFreedSlotsIntoFewerClaims(t *testing.T) {
	t.Parallel()
	const runs = 64
	store := newHistory(t)
	store.add(ids("r", runs)...)
	// Slots free four at a time, as when short runs end together; without the bursts the
	// history's own latency would space the frees out beyond the gathering wait.
	store.finishInBursts(4)
	runner := &fakeRunner{fn: succeed(1)}
	start(t, store, runner, func(c *cluster.Config, _ *cluster.Deps) {
		c.MaxConcurrent = 8
		c.PollInterval = time.Hour
	})
	store.until(t, func() bool { return store.count("completed") == runs }, "every run completed")
	// Claiming as each slot frees would take about one claim per run.
	claims := store.claims()
	require.Less(t, len(claims), runs*3/4, "claims: %v", claims)
	for _, n := range claims {
		require.LessOrEqual(t, n, 8)
	}
}

func TestIdleMemberClaimsAWokenRunAtOnce(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	runner := &fakeRunner{fn: untilCancelled(1)}
	h := start(t, store, runner, func(c *cluster.Config, _ *cluster.Deps) {
		c.MaxConcurrent = 8
		c.PollInterval = time.Hour
	})
	h.steps.claims.reach(t, 1)
	store.add(ids("one", 1)...)
	// The poll is an hour away, so only the wake-up can make the second pass, and it
	// claims without the gathering delay of a backlogged member.
	h.member.Wake()
	h.steps.claims.reach(t, 2)
	require.Eventually(t, func() bool { return runner.started.Load() == 1 }, waitFor, tick)
	require.Equal(t, []int{8, 8}, store.claims(), "no backlog: the claim asks at once for all free slots")
}
