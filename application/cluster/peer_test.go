package cluster_test

import (
	"context"
	"slices"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// The helpers below act on the history the way a submit or another member would,
// through the store's own transitions, never by writing its rows: a run's earlier
// attempts are attempts a peer really made, a lost lease is a lease a peer really took.

// peerOwner is the member that acts beside the one under test.
var peerOwner = cluster.Owner{InstanceID: "peer", Listen: "127.0.0.1:2"}

// peer runs f while the member's claims wait, so the member never takes a run the
// peer is about to claim.
func (h *history) peer(f func(ctx context.Context)) {
	h.gate.Lock()
	defer h.gate.Unlock()
	f(context.Background())
}

// add stores runs as a submit would, in the order given (a claim takes the lowest id
// first). A run described with an Attempt has had that many attempts, each failed and
// retried at once by a peer; one with ElapsedMS has run that long in an earlier attempt
// that a peer handed back. Such a run must be the only pending one of its pool when
// added.
func (h *history) add(cs ...cluster.Claimed) {
	h.t.Helper()
	for _, c := range cs {
		h.create(c)
		for range c.Attempt {
			h.peer(func(ctx context.Context) {
				ref := h.peerClaim(ctx, c)
				require.NoError(h.t, h.Store.Finish(ctx, peerOwner.InstanceID, ref, cluster.Outcome{Status: string(run.Failed),
					ErrorCode: string(run.CodePipelineError), ErrorMessage: "an earlier attempt", Retry: true}, nil))
			})
		}
		if c.ElapsedMS > 0 {
			h.peer(func(ctx context.Context) {
				ref := h.peerClaim(ctx, c)
				require.NoError(h.t, h.Store.HandBack(ctx, peerOwner.InstanceID, ref, cluster.Progress{ElapsedMS: c.ElapsedMS}))
			})
		}
	}
}

func (h *history) create(c cluster.Claimed) {
	h.t.Helper()
	h.mu.Lock()
	h.created++
	at := time.Date(2026, 5, 1, 12, 0, h.created, 0, time.UTC)
	h.mu.Unlock()
	rec := &runs.Record{ID: c.ID, Name: c.Name, Tenant: c.Tenant, Pool: c.Pool, TriggerKind: "api",
		RunDate: c.LogicalAt.Format(time.DateOnly), LogicalAt: c.LogicalAt, MaxAttempts: c.MaxAttempts,
		TimeoutSecs: c.TimeoutSecs, Retry: c.Retry, Config: c.Config, ConfigSealed: c.Sealed,
		ShardCount: c.ShardCount, Traceparent: c.Traceparent, CreatedAt: at}
	_, err := h.Create(context.Background(), rec, nil)
	require.NoError(h.t, err)
}

// peerClaim has the peer claim run c, which must be the first pending run of its pool.
func (h *history) peerClaim(ctx context.Context, c cluster.Claimed) cluster.Ref {
	h.t.Helper()
	got, err := h.Store.Claim(ctx, peerOwner, []string{c.Pool}, 1, heldLease)
	require.NoError(h.t, err)
	require.Len(h.t, got, 1)
	require.Equal(h.t, c.ID, got[0].ID, "the peer claimed another run: add %s first", c.ID)
	return cluster.Ref{ID: got[0].ID, Epoch: got[0].Epoch}
}

// planned stores run c and has the peer claim it and plan it as plan: its shards are
// pending for any member of its pool, the run is sharded.
func (h *history) planned(c cluster.Claimed, plan []execute.ShardSlice) {
	h.t.Helper()
	c.ShardCount = len(plan)
	h.peer(func(ctx context.Context) {
		h.create(c)
		ref := h.peerClaim(ctx, c)
		require.NoError(h.t, h.Store.PlanShards(ctx, peerOwner.InstanceID, ref, plan))
	})
}

// steal has the peer take run id, which the member holds, as after the member was
// paused past its lease: the lease ends (renewed for a millisecond), the peer reclaims it
// and claims the run again at a newer epoch. Every fenced write the member makes about it
// from now on is refused.
func (h *history) steal(id string) {
	h.t.Helper()
	h.peer(func(ctx context.Context) {
		rec := h.get(id)
		require.Equal(h.t, "running", rec.Status)
		_, err := h.Store.Renew(ctx, rec.Owner, []cluster.Ref{{ID: id, Epoch: rec.LeaseEpoch}}, time.Millisecond)
		require.NoError(h.t, err)
		h.untilReclaimed(ctx, func() (bool, error) {
			got, err := h.Store.Reclaim(ctx, nil)
			return slices.ContainsFunc(got, func(r cluster.Reclaimed) bool { return r.ID == id }), err
		})
		h.peerClaim(ctx, cluster.Claimed{ID: id, Pool: rec.Pool})
	})
}

// stealShard is steal for the shard index of run id, the only pending shard of its pool
// once reclaimed.
func (h *history) stealShard(id string, index int) {
	h.t.Helper()
	h.peer(func(ctx context.Context) {
		var held runs.ShardRecord
		for _, s := range h.shards(id) {
			if s.Index == index {
				held = s
			}
		}
		require.Equal(h.t, "running", held.Status)
		epoch := h.shardEpoch(id, index)
		_, err := h.Store.RenewShards(ctx, held.Owner, []cluster.ShardRef{{RunID: id, Index: index, Epoch: epoch}}, time.Millisecond)
		require.NoError(h.t, err)
		h.untilReclaimed(ctx, func() (bool, error) {
			got, err := h.Store.ReclaimShards(ctx, nil)
			return slices.ContainsFunc(got.Shards, func(r cluster.ReclaimedShard) bool { return r.RunID == id && r.Index == index }), err
		})
		claimed, err := h.Store.ClaimShards(ctx, peerOwner, []string{h.get(id).Pool}, 1, heldLease)
		require.NoError(h.t, err)
		require.Len(h.t, claimed, 1)
		require.Equal(h.t, id, claimed[0].Ref.RunID)
		require.Equal(h.t, index, claimed[0].Ref.Index)
	})
}

// untilReclaimed repeats a reclaim until it took what the caller shortened to a
// millisecond's lease: the database clock passes that millisecond during the first few
// statements.
func (h *history) untilReclaimed(ctx context.Context, reclaim func() (bool, error)) {
	h.t.Helper()
	for range 10_000 {
		done, err := reclaim()
		require.NoError(h.t, err)
		if done {
			return
		}
		require.NoError(h.t, ctx.Err())
	}
	h.t.Fatal("the shortened lease never expired")
}

// shards reads the shards of run id.
func (h *history) shards(id string) []runs.ShardRecord {
	h.t.Helper()
	got, err := h.Shards(context.Background(), id, -1, 100)
	require.NoError(h.t, err)
	return got
}

// shardEnded waits until shard index of run id is terminal and returns it.
func (h *history) shardEnded(id string, index int) runs.ShardRecord {
	h.t.Helper()
	var got runs.ShardRecord
	h.until(h.t, func() bool {
		for _, s := range h.shards(id) {
			if s.Index == index {
				got = s
				return terminal(s.Status)
			}
		}
		return false
	}, "shard ended")
	return got
}

// shardEpoch reads the lease epoch of shard index of run id (the shard resource does
// not show it).
func (h *history) shardEpoch(id string, index int) int64 {
	h.t.Helper()
	var epoch int64
	require.NoError(h.t, h.DB().NewRaw("SELECT lease_epoch FROM sluice_shards WHERE run_id = ? AND shard_index = ?",
		id, index).Scan(context.Background(), &epoch))
	return epoch
}

// held stores run c and has the peer claim it: a run another member executes.
func (h *history) held(c cluster.Claimed) {
	h.t.Helper()
	h.peer(func(ctx context.Context) {
		h.create(c)
		h.peerClaim(ctx, c)
	})
}

// memberRow is the membership row the history keeps for instance id.
func (h *history) memberRow(id string) store.MemberInfo {
	h.t.Helper()
	all, err := h.Members(context.Background())
	require.NoError(h.t, err)
	for _, m := range all {
		if m.InstanceID == id {
			return m
		}
	}
	h.t.Fatalf("no membership row of %s", id)
	return store.MemberInfo{}
}
