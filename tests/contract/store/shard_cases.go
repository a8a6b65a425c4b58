package storecontract

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// keyPlan is a key-range plan of n shards over 1..100*n; shard i weighs i+1, so the
// largest-first order is the reverse of the index order.
func keyPlan(n int) []execute.ShardSlice {
	out := make([]execute.ShardSlice, n)
	for i, r := range shard.PlanRanges(1, int64(100*n), n) {
		r := r
		out[i] = execute.ShardSlice{Index: i, Count: n, Range: &r, Weight: int64(i + 1)}
	}
	return out
}

// hashPlan is a hash-bucket plan of n shards of equal weight.
func hashPlan(n int) []execute.ShardSlice {
	out := make([]execute.ShardSlice, n)
	for i := range out {
		out[i] = execute.ShardSlice{Index: i, Count: n}
	}
	return out
}

// sharded creates a run, claims it and stores plan for it: the run is sharded.
func (e *env) sharded(t *testing.T, name string, plan []execute.ShardSlice, mods ...func(*runs.Record)) cluster.Claimed {
	t.Helper()
	mods = append([]func(*runs.Record){func(r *runs.Record) { r.ShardCount = len(plan) }}, mods...)
	c := e.claimOne(t, name, longTTL, mods...)
	require.NoError(t, e.s.PlanShards(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch}, plan))
	return c
}

// claimShards claims up to n shards of pool default for e.owner.
func (e *env) claimShards(t *testing.T, n int, ttl time.Duration) []cluster.ClaimedShard {
	t.Helper()
	got, err := e.s.ClaimShards(e.ctx, e.owner, []string{"default"}, n, ttl)
	require.NoError(t, err)
	return got
}

func (e *env) finishShard(t *testing.T, c cluster.ClaimedShard, o cluster.Outcome, b *builder) string {
	t.Helper()
	parent, err := e.s.FinishShard(e.ctx, e.owner.InstanceID, c.Ref, o, b.build)
	require.NoError(t, err)
	return parent
}

func completed(rows int64) cluster.Outcome {
	return cluster.Outcome{Status: "completed", Stats: cluster.Progress{RowsRead: rows, RowsWritten: rows, Pages: 1, Bytes: rows * 10}}
}

func shardCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"planning moves the run to sharded with its shards in one transaction": func(t *testing.T, e *env) {
			c := e.sharded(t, "p", keyPlan(4), inPool("gpu"))
			got := e.get(t, c.ID)
			require.Equal(t, "sharded", got.Status)
			require.Empty(t, got.Owner, "a sharded run has no lease of its own")
			require.True(t, got.LeaseExpiresAt.IsZero())
			require.Equal(t, &runs.ShardSummary{Total: 4, Pending: 4}, got.Shards)
			require.Len(t, got.Attempts, 1)
			require.Zero(t, got.Attempts[0].EndedAt, "the attempt stays open until the run ends")

			none, err := e.s.ClaimShards(e.ctx, e.owner, []string{"default"}, 10, longTTL)
			require.NoError(t, err)
			require.Empty(t, none, "shards inherit the run's pool")
			claimed, err := e.s.ClaimShards(e.ctx, e.owner, []string{"gpu"}, 10, longTTL)
			require.NoError(t, err)
			require.Len(t, claimed, 4)
		},
		"planning is fenced on the run's owner and epoch, and a stale plan adds nothing": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL, func(r *runs.Record) { r.ShardCount = 3 })
			err := e.s.PlanShards(e.ctx, "member-b", cluster.Ref{ID: c.ID, Epoch: c.Epoch}, keyPlan(3))
			require.ErrorIs(t, err, run.ErrLeaseLost)
			err = e.s.PlanShards(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch + 1}, keyPlan(3))
			require.ErrorIs(t, err, run.ErrLeaseLost)
			got := e.get(t, c.ID)
			require.Equal(t, "running", got.Status)
			require.Nil(t, got.Shards, "a refused plan leaves no shard behind")
			require.Empty(t, e.claimShards(t, 10, longTTL))

			require.NoError(t, e.s.PlanShards(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch}, keyPlan(3)))
			err = e.s.PlanShards(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch}, keyPlan(5))
			require.ErrorIs(t, err, run.ErrLeaseLost, "a second coordinator cannot plan again")
			require.Equal(t, 3, e.get(t, c.ID).Shards.Total)
		},
		"a shard claim is one statement, largest first, bounded, and carries its run": func(t *testing.T, e *env) {
			c := e.sharded(t, "p", keyPlan(5), func(r *runs.Record) { r.TimeoutSecs = 60; r.MaxAttempts = 4 })
			var got []cluster.ClaimedShard
			stmts := e.hook.during(func() { got = e.claimShards(t, 2, longTTL) })
			updates := 0
			for _, q := range stmts {
				if strings.HasPrefix(strings.TrimSpace(strings.ToUpper(q)), "UPDATE") {
					updates++
				}
			}
			require.Equal(t, 1, updates, "one claim statement: %v", stmts)
			require.Len(t, got, 2)
			require.Equal(t, []int{4, 3}, []int{got[0].Ref.Index, got[1].Ref.Index}, "largest first")
			s := got[0]
			require.Equal(t, cluster.ShardRef{RunID: c.ID, Index: 4, Epoch: 1}, s.Ref)
			require.Equal(t, 1, s.Attempt)
			require.Equal(t, 4, s.MaxAttempts)
			require.Equal(t, execute.ShardSlice{Index: 4, Count: 5, Weight: 5,
				Range: &shard.Range{Index: 4, Lo: 401, Hi: 500}}, s.Slice)
			require.Equal(t, c.ID, s.Run.ID)
			require.Equal(t, "p", s.Run.Name)
			require.Equal(t, 60, s.Run.TimeoutSecs)
			require.Equal(t, 5, s.Run.ShardCount)
			require.Equal(t, e.get(t, c.ID).Config, s.Run.Config)
			require.Equal(t, int64(1), s.Run.Epoch, "the epoch is the shard's")

			rest := e.claimShards(t, 10, longTTL)
			require.Len(t, rest, 3)
			require.Equal(t, 0, rest[2].Ref.Index)
			require.True(t, rest[2].Slice.Range.Nulls, "shard 0 reads the NULL keys")
			require.Empty(t, e.claimShards(t, 10, longTTL))
			require.Equal(t, &runs.ShardSummary{Total: 5, Running: 5}, e.get(t, c.ID).Shards)
		},
		"4 concurrent claimers over 3 runs of 64 shards claim each shard exactly once": func(t *testing.T, e *env) {
			for i := range 3 {
				e.sharded(t, fmt.Sprintf("p%d", i), hashPlan(64))
			}
			var (
				mu   sync.Mutex
				seen = map[cluster.ShardRef]int{}
				wg   sync.WaitGroup
			)
			for m := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					owner := cluster.Owner{InstanceID: fmt.Sprintf("member-%d", m)}
					for {
						got, err := e.s.ClaimShards(e.ctx, owner, []string{"default"}, 7, longTTL)
						if !assertNoError(t, err) || len(got) == 0 {
							return
						}
						mu.Lock()
						for _, c := range got {
							seen[cluster.ShardRef{RunID: c.Ref.RunID, Index: c.Ref.Index}]++
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			require.Len(t, seen, 3*64)
			for ref, n := range seen {
				require.Equal(t, 1, n, "shard %+v claimed %d times", ref, n)
			}
		},
		"renewal is one statement and drops shards held at another epoch": func(t *testing.T, e *env) {
			e.sharded(t, "p", hashPlan(3))
			got := e.claimShards(t, 3, longTTL)
			held := []cluster.ShardRef{got[0].Ref, got[1].Ref, {RunID: got[2].Ref.RunID, Index: got[2].Ref.Index, Epoch: 9}}
			var renewed []cluster.ShardRef
			stmts := e.hook.during(func() {
				var err error
				renewed, err = e.s.RenewShards(e.ctx, e.owner.InstanceID, held, longTTL)
				require.NoError(t, err)
			})
			require.Len(t, stmts, 1)
			require.ElementsMatch(t, held[:2], renewed)
			none, err := e.s.RenewShards(e.ctx, "member-b", held[:2], longTTL)
			require.NoError(t, err)
			require.Empty(t, none, "another member renews nothing of ours")
		},
		"the last shard to finish ends the run with summed counters and one callback": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			c := e.sharded(t, "p", hashPlan(3))
			got := e.claimShards(t, 3, longTTL)
			require.NoError(t, e.s.ShardProgress(e.ctx, e.owner.InstanceID, got[0].Ref, cluster.Progress{RowsRead: 7, RowsWritten: 7}))
			require.ErrorIs(t, e.s.ShardProgress(e.ctx, "member-b", got[0].Ref, cluster.Progress{}), run.ErrLeaseLost)
			mid := e.get(t, c.ID)
			require.Equal(t, int64(7), mid.Stats.RowsWritten, "a sharded run shows its shards' counters")

			require.Empty(t, e.finishShard(t, got[0], completed(10), b))
			require.Empty(t, e.finishShard(t, got[1], completed(20), b))
			require.Equal(t, &runs.ShardSummary{Total: 3, Running: 1, Completed: 2}, e.get(t, c.ID).Shards)
			require.Empty(t, b.seen, "no callback while shards run")
			require.Equal(t, "completed", e.finishShard(t, got[2], completed(30), b))

			end := e.get(t, c.ID)
			require.Equal(t, "completed", end.Status)
			require.Equal(t, int64(60), end.Stats.RowsWritten)
			require.Equal(t, int64(3), end.Stats.Pages)
			require.False(t, end.FinishedAt.IsZero())
			require.Equal(t, run.Outcome("completed"), end.Attempts[0].Outcome)
			require.Equal(t, &runs.ShardSummary{Total: 3, Completed: 3}, end.Shards)
			require.Len(t, b.seen, 1, "the run's callback fires once, for the run")
			require.Equal(t, c.ID, b.seen[0].RunID)
			require.Len(t, e.outbox(t), 1)
			_, err := e.s.FinishShard(e.ctx, e.owner.InstanceID, got[2].Ref, completed(1), b.build)
			require.ErrorIs(t, err, run.ErrLeaseLost, "a finished shard is not finished twice")
		},
		"siblings finish after a shard failed, and the run fails naming how many": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			c := e.sharded(t, "p", hashPlan(3))
			got := e.claimShards(t, 3, longTTL)
			require.Empty(t, e.finishShard(t, got[0], cluster.Outcome{Status: "failed", ErrorCode: "pipeline_error", ErrorMessage: "boom"}, b))
			require.Equal(t, "sharded", e.get(t, c.ID).Status)
			require.Empty(t, e.finishShard(t, got[1], completed(5), b))
			require.Equal(t, "failed", e.finishShard(t, got[2], completed(5), b))
			end := e.get(t, c.ID)
			require.Equal(t, "failed", end.Status)
			require.Equal(t, "shard_failed", end.ErrorCode)
			require.Equal(t, "1 of 3 shards failed", end.ErrorMessage)
			require.Equal(t, run.Outcome("failed"), end.Attempts[0].Outcome)
		},
		"a finish by a stale owner is refused and changes nothing": func(t *testing.T, e *env) {
			e.sharded(t, "p", hashPlan(1))
			got := e.claimShards(t, 1, longTTL)[0]
			stale := got.Ref
			stale.Epoch++
			_, err := e.s.FinishShard(e.ctx, e.owner.InstanceID, stale, completed(1), nil)
			require.ErrorIs(t, err, run.ErrLeaseLost)
			_, err = e.s.FinishShard(e.ctx, "member-b", got.Ref, completed(1), nil)
			require.ErrorIs(t, err, run.ErrLeaseLost)
			require.Equal(t, "sharded", e.get(t, got.Ref.RunID).Status)
		},
		"a shard's lease counts for the earliest lease expiry": func(t *testing.T, e *env) {
			e.sharded(t, "p", hashPlan(2))
			_, ok, err := e.s.NextExpiry(e.ctx)
			require.NoError(t, err)
			require.False(t, ok, "a sharded run holds no lease of its own, and no shard is claimed yet")
			e.claimShards(t, 1, 20*time.Second)
			left, ok, err := e.s.NextExpiry(e.ctx)
			require.NoError(t, err)
			require.True(t, ok)
			require.LessOrEqual(t, left, 20*time.Second)
			require.Greater(t, left, 10*time.Second)
		},
		"an expired shard lease is requeued, then poisoned at the cap, which fails the run": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			c := e.sharded(t, "p", hashPlan(2), func(r *runs.Record) { r.MaxAttempts = 2 })
			long := e.claimShards(t, 1, longTTL)[0]
			require.Empty(t, e.finishShard(t, long, completed(1), b), "its sibling is still pending")
			short := e.claimShards(t, 1, shortTTL)[0]
			first := e.reclaimShardUntil(t, short.Ref, b)
			require.Equal(t, "requeued", first.Outcome)
			require.Empty(t, first.Parent)
			_, err := e.s.FinishShard(e.ctx, e.owner.InstanceID, short.Ref, completed(1), b.build)
			require.ErrorIs(t, err, run.ErrLeaseLost, "the old owner's result is discarded")

			again := e.claimShards(t, 1, shortTTL)
			require.Len(t, again, 1)
			require.Equal(t, 2, again[0].Attempt)
			last := e.reclaimShardUntil(t, again[0].Ref, b)
			require.Equal(t, "failed", last.Outcome)
			require.Equal(t, "failed", last.Parent)
			end := e.get(t, c.ID)
			require.Equal(t, "failed", end.Status)
			require.Equal(t, "shard_failed", end.ErrorCode)
			require.Equal(t, "1 of 2 shards failed", end.ErrorMessage)
			require.Len(t, b.seen, 1)
		},
		"cancel of a sharded run cancels pending shards at once and running ones by the flag": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			c := e.sharded(t, "p", hashPlan(4))
			got := e.claimShards(t, 2, longTTL)
			require.False(t, e.requestCancel(t, c.ID), "two shards still run")
			mid := e.get(t, c.ID)
			require.Equal(t, "sharded", mid.Status, "two shards still run")
			require.True(t, mid.CancelRequested)
			require.Equal(t, &runs.ShardSummary{Total: 4, Running: 2, Cancelled: 2}, mid.Shards)
			require.Empty(t, e.claimShards(t, 10, longTTL), "nothing is left to claim")
			flagged, err := e.s.CancelRequested(e.ctx, []string{c.ID})
			require.NoError(t, err)
			require.Equal(t, []string{c.ID}, flagged, "the owners of running shards read the run's flag")

			require.Empty(t, e.finishShard(t, got[0], cluster.Outcome{Status: "cancelled"}, b))
			parent, err := e.s.HandBackShard(e.ctx, e.owner.InstanceID, got[1].Ref, cluster.Progress{}, b.build)
			require.NoError(t, err)
			require.Equal(t, "cancelled", parent, "a hand-back after the cancel ends the shard cancelled")
			end := e.get(t, c.ID)
			require.Equal(t, "cancelled", end.Status)
			require.Equal(t, run.Outcome("cancelled"), end.Attempts[0].Outcome)
			require.Len(t, b.seen, 1)
		},
		"cancel of a sharded run with no shard running ends it at once": func(t *testing.T, e *env) {
			c := e.sharded(t, "p", hashPlan(3))
			require.True(t, e.requestCancel(t, c.ID), "the cancel itself ended the run")
			end := e.get(t, c.ID)
			require.Equal(t, "cancelled", end.Status)
			require.Equal(t, &runs.ShardSummary{Total: 3, Cancelled: 3}, end.Shards)
		},
		"a reclaimed shard of a cancelled run ends cancelled": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			c := e.sharded(t, "p", hashPlan(1))
			got := e.claimShards(t, 1, shortTTL)[0]
			e.requestCancel(t, c.ID)
			r := e.reclaimShardUntil(t, got.Ref, b)
			require.Equal(t, "cancelled", r.Outcome)
			require.Equal(t, "cancelled", r.Parent)
			require.Equal(t, "cancelled", e.get(t, c.ID).Status)
		},
		"a reclaim that ends a sharded run names it": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			c := e.sharded(t, "orders", hashPlan(1))
			got := e.claimShards(t, 1, shortTTL)[0]
			e.requestCancel(t, c.ID)
			var done cluster.ShardReclaim
			require.Eventually(t, func() bool {
				var err error
				done, err = e.s.ReclaimShards(e.ctx, b.build)
				return assertNoError(t, err) && len(done.Shards) == 1
			}, 10*time.Second, 50*time.Millisecond)
			require.Equal(t, got.Ref.Index, done.Shards[0].Index)
			require.Equal(t, "cancelled", done.Shards[0].Parent)
			require.Equal(t, map[string]string{c.ID: "orders"}, done.Names, "the run is counted under its pipeline")
		},
		"the holder of the history lock reclaims shards other owners left running, leases held or not": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			c := e.sharded(t, "p", hashPlan(3))
			got := e.claimShards(t, 2, longTTL)
			require.Len(t, got, 2)
			none, err := e.s.ReclaimShards(e.ctx, b.build)
			require.NoError(t, err)
			require.Empty(t, none.Shards, "their leases hold")
			mine, err := e.s.ReclaimOrphanShards(e.ctx, e.owner.InstanceID, b.build)
			require.NoError(t, err)
			require.Empty(t, mine.Shards, "its own shards are no orphans")

			orphans, err := e.s.ReclaimOrphanShards(e.ctx, "single-server", b.build)
			require.NoError(t, err)
			require.ElementsMatch(t, []cluster.ReclaimedShard{
				{RunID: c.ID, Index: got[0].Ref.Index, Outcome: "requeued"},
				{RunID: c.ID, Index: got[1].Ref.Index, Outcome: "requeued"},
			}, orphans.Shards)
			require.Equal(t, &runs.ShardSummary{Total: 3, Pending: 3}, e.get(t, c.ID).Shards)
			again := e.claimShards(t, 3, longTTL)
			require.Len(t, again, 3, "every shard can run again")

			e.requestCancel(t, c.ID)
			ended, err := e.s.ReclaimOrphanShards(e.ctx, "single-server", b.build)
			require.NoError(t, err)
			require.Len(t, ended.Shards, 3)
			require.Equal(t, "cancelled", ended.Shards[2].Parent, "the last one ends the cancelled run")
			require.Equal(t, "cancelled", e.get(t, c.ID).Status)
		},
		"a shard's running time counts across its attempts": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			c := e.sharded(t, "p", hashPlan(1))
			got := e.claimShards(t, 1, shortTTL)[0]
			require.Zero(t, got.Run.ElapsedMS)
			require.NoError(t, e.s.ShardProgress(e.ctx, e.owner.InstanceID, got.Ref, cluster.Progress{ElapsedMS: 700}))
			require.Equal(t, "requeued", e.reclaimShardUntil(t, got.Ref, b).Outcome)

			again := e.claimShards(t, 1, longTTL)[0]
			require.Equal(t, int64(700), again.Run.ElapsedMS, "the next attempt knows what the earlier ones used of timeout_secs")
			require.NoError(t, e.s.ShardProgress(e.ctx, e.owner.InstanceID, again.Ref, cluster.Progress{ElapsedMS: 300}))
			list, err := e.s.Shards(e.ctx, c.ID, -1, 1)
			require.NoError(t, err)
			require.Equal(t, int64(1000), list[0].Stats.ElapsedMS)
			parent, err := e.s.HandBackShard(e.ctx, e.owner.InstanceID, again.Ref, cluster.Progress{ElapsedMS: 400}, b.build)
			require.NoError(t, err)
			require.Empty(t, parent)

			last := e.claimShards(t, 1, longTTL)[0]
			require.Equal(t, int64(1100), last.Run.ElapsedMS, "a hand-back keeps the time too")
			e.finishShard(t, last, cluster.Outcome{Status: "completed", Stats: cluster.Progress{ElapsedMS: 50}}, b)
			list, err = e.s.Shards(e.ctx, c.ID, -1, 1)
			require.NoError(t, err)
			require.Equal(t, int64(1150), list[0].Stats.ElapsedMS)
		},
		"a hand-back returns the shard without spending an attempt": func(t *testing.T, e *env) {
			e.sharded(t, "p", hashPlan(1))
			got := e.claimShards(t, 1, longTTL)[0]
			parent, err := e.s.HandBackShard(e.ctx, e.owner.InstanceID, got.Ref, cluster.Progress{RowsWritten: 3}, nil)
			require.NoError(t, err)
			require.Empty(t, parent)
			_, err = e.s.HandBackShard(e.ctx, e.owner.InstanceID, got.Ref, cluster.Progress{}, nil)
			require.ErrorIs(t, err, run.ErrLeaseLost)
			again := e.claimShards(t, 1, longTTL)
			require.Len(t, again, 1)
			require.Equal(t, 1, again[0].Attempt)
			require.Equal(t, got.Ref.Epoch+1, again[0].Ref.Epoch)
		},
		"shards list by index with their owner, range, counters and error": func(t *testing.T, e *env) {
			c := e.sharded(t, "p", keyPlan(3))
			got := e.claimShards(t, 1, longTTL)[0] // index 2, the largest
			require.NoError(t, e.s.ShardProgress(e.ctx, e.owner.InstanceID, got.Ref, cluster.Progress{RowsWritten: 4}))
			first, err := e.s.Shards(e.ctx, c.ID, -1, 2)
			require.NoError(t, err)
			require.Len(t, first, 2)
			require.Equal(t, 0, first[0].Index)
			require.Equal(t, "pending", first[0].Status)
			require.True(t, first[0].HasRange)
			require.Equal(t, []int64{1, 100}, []int64{first[0].KeyLo, first[0].KeyHi})
			require.True(t, first[0].KeyNulls)
			require.Empty(t, first[0].Owner)
			rest, err := e.s.Shards(e.ctx, c.ID, first[1].Index, 2)
			require.NoError(t, err)
			require.Len(t, rest, 1)
			r := rest[0]
			require.Equal(t, 2, r.Index)
			require.Equal(t, "running", r.Status)
			require.Equal(t, e.owner.InstanceID, r.Owner)
			require.Equal(t, e.owner.Listen, r.OwnerListen)
			require.Equal(t, int64(4), r.Stats.RowsWritten)
			require.False(t, r.ClaimedAt.IsZero())
			e.finishShard(t, got, cluster.Outcome{Status: "failed", ErrorCode: "pipeline_error", ErrorMessage: "boom"}, &builder{})
			rest, err = e.s.Shards(e.ctx, c.ID, 1, 10)
			require.NoError(t, err)
			require.Equal(t, "pipeline_error", rest[0].ErrorCode)
			require.False(t, rest[0].FinishedAt.IsZero())
			none, err := e.s.Shards(e.ctx, e.claimOne(t, "q", longTTL).ID, -1, 10)
			require.NoError(t, err)
			require.Empty(t, none, "a run never split has no shards")
		},
		"deleting a finished sharded run deletes its shards": func(t *testing.T, e *env) {
			c := e.sharded(t, "p", hashPlan(2))
			e.requestCancel(t, c.ID)
			require.NoError(t, e.s.Delete(e.ctx, c.ID))
			_, err := e.s.Get(e.ctx, c.ID)
			require.ErrorIs(t, err, run.ErrNotFound)
			require.Empty(t, e.claimShards(t, 10, longTTL))
		},
	}
}

// reclaimShardUntil calls ReclaimShards until it reports ref's shard.
func (e *env) reclaimShardUntil(t *testing.T, ref cluster.ShardRef, b *builder) cluster.ReclaimedShard {
	t.Helper()
	var got cluster.ReclaimedShard
	require.Eventually(t, func() bool {
		done, err := e.s.ReclaimShards(e.ctx, b.build)
		if !assertNoError(t, err) {
			return false
		}
		for _, r := range done.Shards {
			if r.RunID == ref.RunID && r.Index == ref.Index {
				got = r
				return true
			}
		}
		return false
	}, 10*time.Second, 50*time.Millisecond)
	return got
}
