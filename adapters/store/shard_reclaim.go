package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// ReclaimShards ends the expired shard leases of any owner (by the database clock) with
// the rules of shard.Requeue, or cancels the shard when its run's cancel was requested; a
// shard that was the last unfinished one ends its run. Then, as the backstop of
// FinishShard, it ends sharded runs that have no unfinished shard left. Each item is its
// own transaction with the lock order of FinishShard.
func (s *Store) ReclaimShards(ctx context.Context, build runs.CallbackBuilder) (cluster.ShardReclaim, error) {
	return s.reclaimShards(ctx, "lease_expires_at <= {now}", nil, build)
}

// ReclaimOrphanShards is ReclaimShards for running shards owned by anyone but self,
// expired or not. Only the holder of the exclusive history lock may call it: then no
// other member can be executing them (the shards a cluster left behind).
func (s *Store) ReclaimOrphanShards(ctx context.Context, self string, build runs.CallbackBuilder) (cluster.ShardReclaim, error) {
	return s.reclaimShards(ctx, "(owner IS NULL OR owner <> ?)", []any{self}, build)
}

// reclaimShards reclaims the running shards that match cond (with condArgs), then runs
// the backstop.
func (s *Store) reclaimShards(ctx context.Context, cond string, condArgs []any, build runs.CallbackBuilder) (cluster.ShardReclaim, error) {
	var out cluster.ShardReclaim
	expired, err := shardLeases().running(ctx, s, cond, condArgs)
	if err != nil {
		return out, translate("find expired shard leases", err)
	}
	for _, x := range expired {
		r, ok, err := s.reclaimShard(ctx, x.RunID, x.Index, cond, condArgs, build)
		if err != nil {
			return out, translate(fmt.Sprintf("reclaim shard %d of run %s", x.Index, x.RunID), err)
		}
		if ok {
			out.Shards = append(out.Shards, r)
		}
	}
	var stale []string
	err = s.db.NewRaw(`SELECT id FROM sluice_runs r WHERE status = 'sharded'
  AND NOT EXISTS (SELECT 1 FROM sluice_shards s WHERE s.run_id = r.id AND s.status IN ('pending', 'running'))
ORDER BY id LIMIT ?`, reclaimBatch).Scan(ctx, &stale)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return out, translate("find sharded runs with every shard ended", err)
	}
	for _, id := range stale {
		var status string
		err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			cancelled, err := s.lockParent(ctx, tx, id)
			if errors.Is(err, run.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			status, err = s.settleParent(ctx, tx, id, cancelled, build)
			return err
		})
		if err != nil {
			return out, translate("end sharded run "+id, err)
		}
		if status != "" {
			if out.Settled == nil {
				out.Settled = map[string]string{}
			}
			out.Settled[id] = status
		}
	}
	names, err := s.endedNames(ctx, out)
	if err != nil {
		return out, translate("read the names of the runs the reclaim ended", err)
	}
	out.Names = names
	return out, nil
}

// endedNames reads the names of the runs a reclaim ended, for their metrics' pipeline
// label.
func (s *Store) endedNames(ctx context.Context, out cluster.ShardReclaim) (map[string]string, error) {
	var ids []string
	for _, r := range out.Shards {
		if r.Parent != "" {
			ids = append(ids, r.RunID)
		}
	}
	for id := range out.Settled {
		ids = append(ids, id)
	}
	return s.runNames(ctx, ids)
}

// runNames reads the names of runs that ended (terminal runs' names no longer change);
// nil when ids is empty.
func (s *Store) runNames(ctx context.Context, ids []string) (map[string]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []struct {
		ID   string `bun:"id"`
		Name string `bun:"name"`
	}
	if err := s.db.NewRaw("SELECT id, name FROM sluice_runs WHERE id IN (?)", bun.In(ids)).Scan(ctx, &rows); err != nil &&
		!errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	names := make(map[string]string, len(rows))
	for _, r := range rows {
		names[r.ID] = r.Name
	}
	return names, nil
}

func (s *Store) reclaimShard(ctx context.Context, runID string, index int, cond string, condArgs []any,
	build runs.CallbackBuilder) (cluster.ReclaimedShard, bool, error) {
	res := cluster.ReclaimedShard{RunID: runID, Index: index}
	found := false
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		cancelled, err := s.lockParent(ctx, tx, runID)
		if errors.Is(err, run.ErrNotFound) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return err
		}
		where, args := shardLeases().stillRunning(cluster.ShardRef{RunID: runID, Index: index}, cond, condArgs)
		l, err := s.lockShard(ctx, tx, where, args...)
		if err != nil || l == nil {
			return err // nil: renewed, finished or reclaimed by a peer meanwhile
		}
		if err := l.shard.Requeue(cancelled, l.now); err != nil {
			return err
		}
		if err := s.saveShard(ctx, tx, l, "", nil); err != nil {
			return err
		}
		after := l.shard.Status()
		found = true
		res.Outcome = reclaimOutcome(run.Status(after))
		if !after.Terminal() {
			return s.notifyWork(ctx, tx)
		}
		res.Parent, err = s.settleParent(ctx, tx, runID, cancelled, build)
		return err
	})
	return res, found, err
}
