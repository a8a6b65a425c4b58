package cluster_test

import (
	"context"
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
	store := newHistory(t)
	store.add(shardedRun("r1", 4))
	pl := &fakePlanner{plan: hashSlices(4)}
	runner := &fakeRunner{fn: untilCancelled(1)}
	h := start(t, store, runner, func(c *cluster.Config, d *cluster.Deps) {
		sharding(pl, true)(c, d)
		c.MaxConcurrent = 1 // the coordinator, then one shard at a time
	})

	store.until(t, func() bool { return len(store.shards("r1")) == 4 }, "the plan is stored")
	require.Equal(t, "sharded", store.get("r1").Status, "the run belongs to its shards now")
	pl.mu.Lock()
	require.Equal(t, []int{4}, pl.counts, "the planner is asked for shard.count shards")
	pl.mu.Unlock()
	// The coordinator's slot is freed only after it settled; the one slot then runs a
	// shard, never the run itself.
	require.Eventually(t, func() bool { return runner.started.Load() == 1 }, waitFor, tick)
	require.NotNil(t, runner.job(0).Shard, "the coordinator moves no row itself")
	_, finishedRun := store.outcome("r1")
	require.False(t, finishedRun)
	require.Zero(t, store.handBackCalls.Load())
	require.Equal(t, 1, h.member.InFlight())
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
			store := newHistory(t)
			store.add(shardedRun("r1", 4))
			runner := &fakeRunner{fn: succeed(3)}
			start(t, store, runner, sharding(&fakePlanner{}, tc.on))

			rec := finished(t, store, "r1")
			require.Equal(t, string(run.Completed), rec.Status)
			require.Nil(t, runner.job(0).Shard, "the run reads its whole source")
			require.Empty(t, store.shards("r1"), "nothing was planned")
			var lines []string
			for _, l := range store.logs("r1") {
				lines = append(lines, l.Level+" "+l.Message)
			}
			require.Contains(t, strings.Join(lines, "\n"), "WARN "+tc.warn)
		})
	}
}

func TestABadShardKeyFailsTheRun(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(shardedRun("r1", 4))
	pl := &fakePlanner{err: &execute.Failure{Code: run.CodeShardKeyInvalid, Role: execute.RoleSource, Connector: "postgres",
		Err: fmt.Errorf("plan shards: %w: source.config.shard.key \"name\" is a text column", execute.ErrShardKey)}}
	runner := &fakeRunner{fn: succeed(1)}
	start(t, store, runner, sharding(pl, true))

	rec := finished(t, store, "r1")
	require.Equal(t, string(run.Failed), rec.Status)
	require.Equal(t, string(run.CodeShardKeyInvalid), rec.ErrorCode)
	require.Contains(t, rec.ErrorMessage, `shard.key "name"`)
	require.Zero(t, runner.started.Load())
}

func TestShardsRunNarrowedUnderTheirOwnStateKeys(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.planned(claimed("r2"), hashSlices(3))
	runner := &fakeRunner{fn: succeed(5)}
	h := start(t, store, runner, sharding(&fakePlanner{}, true))

	for i := range 3 {
		sh := store.shardEnded("r2", i)
		require.Equal(t, string(run.Completed), sh.Status)
		require.Equal(t, int64(5), sh.Stats.RowsWritten)
	}
	keys := map[string]int{}
	for i := range 3 {
		j := runner.job(i)
		require.NotNil(t, j.Shard)
		require.Equal(t, 3, j.Shard.Count)
		keys[j.StateKey] = j.Shard.Index
	}
	require.Equal(t, map[string]int{"r2::0": 0, "r2::1": 1, "r2::2": 2}, keys, "state key {run_id}::{shard_index}")
	rec := finished(t, store, "r2")
	require.Equal(t, string(run.Completed), rec.Status, "the last shard ended the run")
	require.EqualValues(t, 15, rec.Stats.RowsWritten, "the run's counters sum its shards'")
	_, finishedRun := store.outcome("r2")
	require.False(t, finishedRun, "shards never finish their run through the run's own lease")
	require.Eventually(t, func() bool { return h.member.InFlight() == 0 }, waitFor, tick)
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	require.Equal(t, []string{"orders:completed/ok"}, h.metrics.finished, "the run is counted once, when its last shard ends")
}

func TestShardsAndRunsShareOneCapacityShardsFirst(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.planned(claimed("r3"), hashSlices(3))
	store.add(claimed("run-a"), claimed("run-b"))
	runner := &fakeRunner{fn: untilCancelled(1)}
	h := start(t, store, runner, sharding(&fakePlanner{}, true))

	require.Eventually(t, func() bool { return runner.started.Load() == 4 }, waitFor, tick)
	require.Equal(t, 4, h.member.InFlight())
	require.Equal(t, 1, store.claims()[0], "runs fill what the shards left of the capacity")
	require.Equal(t, 1, store.count("pending"))
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
	store := newHistory(t)
	store.planned(claimed("r5"), hashSlices(1))
	runner := &fakeRunner{}
	stolen := make(chan struct{})
	runner.fn = func(ctx context.Context, job execute.Job) (execute.Stats, error) {
		store.stealShard("r5", 0) // a peer took it: the next renewal loses it
		close(stolen)
		return untilCancelled(2)(ctx, job)
	}
	h := start(t, store, runner, sharding(&fakePlanner{}, true))

	receive(t, stolen, "the shard started")
	require.Eventually(t, func() bool {
		runner.mu.Lock()
		defer runner.mu.Unlock()
		return len(runner.jobs) == 1 && runner.active == 0
	}, waitFor, tick, "the renewal that lost the lease stops the shard")
	// Released only after it settled: a result it wrongly wrote would be there by now.
	require.Eventually(t, func() bool { return h.member.InFlight() == 0 }, waitFor, tick)
	sh := store.shards("r5")[0]
	require.Equal(t, "running", sh.Status, "a shard whose lease is gone writes no result")
	require.Equal(t, peerOwner.InstanceID, sh.Owner)
}

func TestCancelOfARunStopsItsShardsHere(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.planned(claimed("r4"), hashSlices(2))
	runner := &fakeRunner{fn: untilCancelled(1)}
	h := start(t, store, runner, sharding(&fakePlanner{}, true))

	require.Eventually(t, func() bool { return runner.started.Load() == 2 }, waitFor, tick)
	// The cancel of a sharded run sets its flag (a member's API) and fires the tokens of
	// its shards where they run.
	ended, err := store.RequestCancel(context.Background(), "r4")
	require.NoError(t, err)
	require.False(t, ended, "its shards still run")
	require.True(t, h.member.CancelLocal("r4"))
	for i := range 2 {
		require.Equal(t, string(run.Cancelled), store.shardEnded("r4", i).Status)
	}
	require.Equal(t, "cancelled", finished(t, store, "r4").Status)
}

func TestShardSlicesCoverTheKeyRange(t *testing.T) {
	t.Parallel()
	// The member hands each shard's slice, as the history keeps it, to the runner.
	lo, hi := shard.Range{Index: 0, Lo: 1, Hi: 10}, shard.Range{Index: 1, Lo: 11, Hi: 20}
	store := newHistory(t)
	store.planned(claimed("r6"), []execute.ShardSlice{{Index: 0, Count: 2, Range: &lo}, {Index: 1, Count: 2, Range: &hi}})
	runner := &fakeRunner{fn: succeed(1)}
	start(t, store, runner, sharding(&fakePlanner{}, true))
	require.Eventually(t, func() bool { return runner.started.Load() == 2 }, waitFor, tick)
	for i := range 2 {
		j := runner.job(i)
		want := map[int]*shard.Range{0: &lo, 1: &hi}[j.Shard.Index]
		require.Equal(t, &execute.ShardSlice{Index: want.Index, Count: 2, Range: want}, j.Shard)
		require.Equal(t, fmt.Sprintf("r6::%d", want.Index), j.StateKey)
	}
}

func TestDrainHandsShardsBack(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.planned(claimed("r7"), hashSlices(2))
	runner := &fakeRunner{fn: untilCancelled(3)}
	h := start(t, store, runner, func(c *cluster.Config, d *cluster.Deps) {
		sharding(&fakePlanner{}, true)(c, d)
		c.ShutdownGrace = 20 * time.Millisecond
	})
	require.Eventually(t, func() bool { return h.member.InFlight() == 2 }, waitFor, tick)
	require.NoError(t, h.member.Drain(t.Context()))
	require.Zero(t, h.member.InFlight())
	for _, sh := range store.shards("r7") {
		require.Equal(t, "pending", sh.Status, "a drained shard goes back to pending")
		require.Zero(t, sh.Attempt, "without spending an attempt")
		require.EqualValues(t, 3, sh.Stats.RowsWritten)
	}
	require.Equal(t, "sharded", store.get("r7").Status)
}

func TestShardClaimsOnlyWhenShardsMayBePending(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	n := newFakeNotifications()
	shardCalls := func() int { store.mu.Lock(); defer store.mu.Unlock(); return store.shardClaims }
	h := start(t, store, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
		sharding(&fakePlanner{}, true)(c, d)
		noPolling(n)(c, d)
	})
	require.Eventually(t, func() bool { return shardCalls() == 1 }, waitFor, tick, "the first claim looks for shards")

	for i := range 5 { // local work: submissions and freed slots
		id := fmt.Sprintf("r%d", i)
		store.add(claimed(id))
		h.member.Wake()
		finished(t, store, id)
	}
	require.Equal(t, 1, shardCalls(), "a wake-up from this member cannot have made shards pending")

	store.planned(claimed("big"), hashSlices(2))
	n.wake <- struct{}{} // a peer planned them
	for i := range 2 {
		store.shardEnded("big", i)
	}
	require.GreaterOrEqual(t, shardCalls(), 2)
}

// A single server holds the history lock, so the shards a cluster left running at its
// start have no live owner: it reclaims them at once instead of waiting out their leases.
func TestReclaimOrphanShardsOnlyWhenExclusive(t *testing.T) {
	t.Parallel()
	for _, exclusive := range []bool{true, false} {
		store := newHistory(t)
		// A peer runs shard 0 of r1 and the only shard of r2, whose cancel is requested,
		// in a pool the member does not serve (what is requeued stays put).
		r1, r2 := claimed("r1"), claimed("r2")
		r2.Name = "events"
		r1.Pool, r2.Pool = "elsewhere", "elsewhere"
		store.planned(r1, hashSlices(2))
		store.planned(r2, hashSlices(1))
		store.peer(func(ctx context.Context) {
			got, err := store.Store.ClaimShards(ctx, peerOwner, []string{"elsewhere"}, 3, heldLease)
			require.NoError(t, err)
			require.Len(t, got, 3)
			_, err = store.RequestCancel(ctx, "r2")
			require.NoError(t, err)
		})
		h := start(t, store, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
			sharding(&fakePlanner{}, false)(c, d)
			c.Exclusive = exclusive
		})
		h.metrics.mu.Lock()
		finished := slices.Clone(h.metrics.finished)
		h.metrics.mu.Unlock()
		if !exclusive {
			for _, sh := range append(store.shards("r1"), store.shards("r2")...) {
				require.Equal(t, "running", sh.Status, "a cluster member never assumes a peer's shards are orphans")
			}
			require.Empty(t, finished)
			continue
		}
		for _, sh := range store.shards("r1") {
			require.Equal(t, "pending", sh.Status, "requeued")
		}
		require.Equal(t, "cancelled", store.shards("r2")[0].Status)
		require.Equal(t, "cancelled", store.get("r2").Status, "its last shard ended the run")
		require.Equal(t, []string{"events:cancelled/cancelled"}, finished,
			"the runs the reclaim ended are counted under their pipelines")
	}
}
