package cluster_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

func shardedRun(id string, count int) cluster.Claimed {
	c := claimed(id)
	c.ShardCount = count
	return c
}

func hashSlices(n int) []execute.ShardSlice {
	out := make([]execute.ShardSlice, n)
	for i := range out {
		out[i] = execute.ShardSlice{Index: i, Count: n}
	}
	return out
}

func TestCoordinatorPlansTheRunAndHandsItToItsShards(t *testing.T) {
	t.Parallel()
	store := newFakeStore(shardedRun("r1", 4))
	sh, pl := newFakeShards(), &fakePlanner{plan: hashSlices(4)}
	runner := &fakeRunner{fn: succeed(1)}
	h := start(t, store, runner, sharding(sh, pl, true))

	require.Eventually(t, func() bool { _, ok := sh.plan("r1"); return ok }, waitFor, tick)
	plan, _ := sh.plan("r1")
	require.Equal(t, hashSlices(4), plan)
	require.Equal(t, []int{4}, pl.counts, "the planner is asked for shard.count shards")
	// The coordinator's execution is released only after it settled, so a wrong finish
	// or hand-back would be recorded by then.
	require.Eventually(t, func() bool { return h.member.InFlight() == 0 }, waitFor, tick)
	require.Zero(t, runner.started.Load(), "the coordinator moves no row itself")
	_, finishedRun := store.outcome("r1")
	_, handedBack := store.handBack("r1")
	require.False(t, finishedRun || handedBack, "the run belongs to its shards now")
}

func TestShardedConfigRunsWholeWithoutClusterOrWithAnUnsplittableSource(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		on   bool
		warn string
	}{
		"no --cluster":         {false, "shard: ignored without --cluster"},
		"unsplittable (a URL)": {true, "shard: ignored because this source cannot be split"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := newFakeStore(shardedRun("r1", 4))
			sh, pl := newFakeShards(), &fakePlanner{}
			runner := &fakeRunner{fn: succeed(3)}
			start(t, store, runner, sharding(sh, pl, tc.on))

			o := finished(t, store, "r1")
			require.Equal(t, string(run.Completed), o.Status)
			require.Nil(t, runner.job(0).Shard, "the run reads its whole source")
			_, planned := sh.plan("r1")
			require.False(t, planned)
			var lines []string
			for _, l := range o.Logs {
				lines = append(lines, l.Level+" "+l.Message)
			}
			require.Contains(t, strings.Join(lines, "\n"), "WARN "+tc.warn)
		})
	}
}

func TestABadShardKeyFailsTheRun(t *testing.T) {
	t.Parallel()
	store := newFakeStore(shardedRun("r1", 4))
	pl := &fakePlanner{err: &execute.Failure{Code: run.CodeShardKeyInvalid, Role: execute.RoleSource, Connector: "postgres",
		Err: fmt.Errorf("plan shards: %w: source.config.shard.key \"name\" is a text column", execute.ErrShardKey)}}
	runner := &fakeRunner{fn: succeed(1)}
	start(t, store, runner, sharding(newFakeShards(), pl, true))

	o := finished(t, store, "r1")
	require.Equal(t, string(run.Failed), o.Status)
	require.Equal(t, string(run.CodeShardKeyInvalid), o.ErrorCode)
	require.Contains(t, o.ErrorMessage, `shard.key "name"`)
	require.Zero(t, runner.started.Load())
}

func TestShardsRunNarrowedUnderTheirOwnStateKeys(t *testing.T) {
	t.Parallel()
	store := newFakeStore()
	sh := newFakeShards()
	sh.addShards(shardedRun("r2", 3), 3)
	runner := &fakeRunner{fn: succeed(5)}
	h := start(t, store, runner, sharding(sh, &fakePlanner{}, true))

	for i := range 3 {
		require.Eventually(t, func() bool { _, ok := sh.outcome(cluster.ShardRef{RunID: "r2", Index: i}); return ok }, waitFor, tick)
		o, _ := sh.outcome(cluster.ShardRef{RunID: "r2", Index: i})
		require.Equal(t, string(run.Completed), o.Status)
		require.Equal(t, int64(5), o.Stats.RowsWritten)
	}
	keys := map[string]int{}
	for i := range 3 {
		j := runner.job(i)
		require.NotNil(t, j.Shard)
		require.Equal(t, 3, j.Shard.Count)
		keys[j.StateKey] = j.Shard.Index
	}
	require.Equal(t, map[string]int{"r2::0": 0, "r2::1": 1, "r2::2": 2}, keys, "state key {run_id}::{shard_index}")
	_, finishedRun := store.outcome("r2")
	require.False(t, finishedRun, "shards never finish their run through the run's own lease")
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	require.Equal(t, []string{"orders:completed/ok"}, h.metrics.finished, "the run is counted once, when its last shard ends")
}

func TestShardsAndRunsShareOneCapacityShardsFirst(t *testing.T) {
	t.Parallel()
	store := newFakeStore(claimed("run-a"), claimed("run-b"))
	sh := newFakeShards()
	sh.addShards(shardedRun("r3", 3), 3)
	runner := &fakeRunner{fn: untilCancelled(1)}
	h := start(t, store, runner, sharding(sh, &fakePlanner{}, true))

	require.Eventually(t, func() bool { return runner.started.Load() == 4 }, waitFor, tick)
	require.Equal(t, 4, h.member.InFlight())
	store.with(func() {
		require.Equal(t, 1, store.claimCalls[0], "runs fill what the shards left of the capacity")
		require.Len(t, store.pending, 1)
	})
	shards := 0
	for i := range 4 {
		if runner.job(i).Shard != nil {
			shards++
		}
	}
	require.Equal(t, 3, shards, "the three shards were claimed before the runs")
}

func TestAShardWhoseRenewalFailsIsStoppedAndDiscarded(t *testing.T) {
	t.Parallel()
	sh := newFakeShards()
	sh.addShards(shardedRun("r5", 1), 1)
	sh.notRenewed[0] = true
	runner := &fakeRunner{fn: untilCancelled(2)}
	h := start(t, newFakeStore(), runner, sharding(sh, &fakePlanner{}, true))

	require.Eventually(t, func() bool {
		runner.mu.Lock()
		defer runner.mu.Unlock()
		return len(runner.jobs) == 1 && runner.active == 0
	}, waitFor, tick, "the renewal that lost the lease stops the shard")
	// Released only after it settled: a result it wrongly wrote would be there by now.
	require.Eventually(t, func() bool { return h.member.InFlight() == 0 }, waitFor, tick)
	_, ok := sh.outcome(cluster.ShardRef{RunID: "r5", Index: 0})
	require.False(t, ok, "a shard whose lease is gone writes no result")
}

func TestCancelOfARunStopsItsShardsHere(t *testing.T) {
	t.Parallel()
	sh := newFakeShards()
	sh.addShards(shardedRun("r4", 2), 2)
	runner := &fakeRunner{fn: untilCancelled(1)}
	h := start(t, newFakeStore(), runner, sharding(sh, &fakePlanner{}, true))

	require.Eventually(t, func() bool { return runner.started.Load() == 2 }, waitFor, tick)
	require.True(t, h.member.CancelLocal("r4"))
	for i := range 2 {
		require.Eventually(t, func() bool { _, ok := sh.outcome(cluster.ShardRef{RunID: "r4", Index: i}); return ok }, waitFor, tick)
		o, _ := sh.outcome(cluster.ShardRef{RunID: "r4", Index: i})
		require.Equal(t, string(run.Cancelled), o.Status)
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	require.Equal(t, "cancelled", sh.ended["r4"])
}

func TestShardSlicesCoverTheKeyRange(t *testing.T) {
	t.Parallel()
	// The member hands each shard's slice to the runner unchanged.
	r := shard.Range{Index: 1, Lo: 11, Hi: 20}
	sh := newFakeShards()
	sh.addShards(shardedRun("r6", 2), 1)
	sh.pending[0].Slice = execute.ShardSlice{Index: 1, Count: 2, Range: &r}
	sh.pending[0].Ref.Index = 1
	runner := &fakeRunner{fn: succeed(1)}
	start(t, newFakeStore(), runner, sharding(sh, &fakePlanner{}, true))
	require.Eventually(t, func() bool { return runner.started.Load() == 1 }, waitFor, tick)
	require.Equal(t, &execute.ShardSlice{Index: 1, Count: 2, Range: &r}, runner.job(0).Shard)
	require.Equal(t, "r6::1", runner.job(0).StateKey)
}

func TestDrainHandsShardsBack(t *testing.T) {
	t.Parallel()
	sh := newFakeShards()
	sh.addShards(shardedRun("r7", 2), 2)
	runner := &fakeRunner{fn: untilCancelled(3)}
	h := start(t, newFakeStore(), runner, func(c *cluster.Config, d *cluster.Deps) {
		sharding(sh, &fakePlanner{}, true)(c, d)
		c.ShutdownGrace = 20 * time.Millisecond
	})
	require.Eventually(t, func() bool { return h.member.InFlight() == 2 }, waitFor, tick)
	require.NoError(t, h.member.Drain(t.Context()))
	require.Zero(t, h.member.InFlight())
	sh.mu.Lock()
	defer sh.mu.Unlock()
	require.ElementsMatch(t, []cluster.ShardRef{{RunID: "r7", Index: 0, Epoch: 7}, {RunID: "r7", Index: 1, Epoch: 7}}, sh.handedBack,
		"a drained shard goes back to pending without spending an attempt")
	require.Empty(t, sh.finished)
}

func TestShardClaimsOnlyWhenShardsMayBePending(t *testing.T) {
	t.Parallel()
	store := newFakeStore()
	sh := newFakeShards()
	n := newFakeNotifications()
	shardCalls := func() int { sh.mu.Lock(); defer sh.mu.Unlock(); return sh.claimCalls }
	h := start(t, store, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
		sharding(sh, &fakePlanner{}, true)(c, d)
		noPolling(n)(c, d)
	})
	require.Eventually(t, func() bool { return shardCalls() == 1 }, waitFor, tick, "the first claim looks for shards")

	for i := range 5 { // local work: submissions and freed slots
		id := fmt.Sprintf("r%d", i)
		store.add(claimed(id))
		h.member.Wake()
		require.Eventually(t, func() bool { _, ok := store.outcome(id); return ok }, waitFor, tick)
	}
	require.Equal(t, 1, shardCalls(), "a wake-up from this member cannot have made shards pending")

	sh.addShards(shardedRun("big", 2), 2)
	n.wake <- struct{}{} // a peer planned them
	for i := range 2 {
		require.Eventually(t, func() bool { _, ok := sh.outcome(cluster.ShardRef{RunID: "big", Index: i}); return ok }, waitFor, tick)
	}
	require.GreaterOrEqual(t, shardCalls(), 2)
}

// A single server holds the history lock, so the shards a cluster left running at its
// start have no live owner: it reclaims them at once instead of waiting out their leases.
func TestReclaimOrphanShardsOnlyWhenExclusive(t *testing.T) {
	t.Parallel()
	for _, exclusive := range []bool{true, false} {
		sh := newFakeShards()
		sh.orphans = cluster.ShardReclaim{
			Shards:  []cluster.ReclaimedShard{{RunID: "r1", Index: 0, Outcome: "requeued"}, {RunID: "r2", Index: 1, Outcome: "cancelled", Parent: "cancelled"}},
			Settled: map[string]string{"r3": "completed"},
			Names:   map[string]string{"r2": "orders", "r3": "events"},
		}
		h := start(t, newFakeStore(), &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
			sharding(sh, &fakePlanner{}, false)(c, d)
			c.Exclusive = exclusive
		})
		sh.mu.Lock()
		calls := slices.Clone(sh.orphanCalls)
		sh.mu.Unlock()
		h.metrics.mu.Lock()
		finished := slices.Clone(h.metrics.finished)
		h.metrics.mu.Unlock()
		if !exclusive {
			require.Empty(t, calls, "a cluster member never assumes a peer's shards are orphans")
			continue
		}
		require.Equal(t, []string{"m1"}, calls)
		require.ElementsMatch(t, []string{"orders:cancelled/cancelled", "events:completed/ok"}, finished,
			"the runs the reclaim ended are counted under their pipelines")
	}
}
