package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// shardFence is the condition of every write about an owned shard, like fence for runs.
// Arguments: run id, shard index, owner, epoch.
const shardFence = `run_id = ? AND shard_index = ? AND owner = ? AND lease_epoch = ? AND status = 'running'
  AND lease_expires_at > {now}`

// shardColumns are what a shard claim returns.
const shardColumns = "run_id, shard_index, shard_count, key_lo, key_hi, key_nulls, weight, lease_epoch, attempt, max_attempts, elapsed_ms"

type shardClaimRow struct {
	RunID       string `bun:"run_id"`
	Index       int    `bun:"shard_index"`
	Count       int    `bun:"shard_count"`
	KeyLo       *int64 `bun:"key_lo"`
	KeyHi       *int64 `bun:"key_hi"`
	KeyNulls    bool   `bun:"key_nulls"`
	Weight      int64  `bun:"weight"`
	LeaseEpoch  int64  `bun:"lease_epoch"`
	Attempt     int    `bun:"attempt"`
	MaxAttempts int    `bun:"max_attempts"`
	// ElapsedMS is the running time of the shard's earlier attempts.
	ElapsedMS int64 `bun:"elapsed_ms"`
}

func (r shardClaimRow) slice() execute.ShardSlice {
	sl := execute.ShardSlice{Index: r.Index, Count: r.Count, Weight: r.Weight}
	if r.KeyLo != nil && r.KeyHi != nil {
		sl.Range = &shard.Range{Index: r.Index, Lo: *r.KeyLo, Hi: *r.KeyHi, Nulls: r.KeyNulls}
	}
	return sl
}

// PlanShards stores the plan of an owned run and moves the run to sharded, in one
// transaction fenced on the run's (owner, epoch); see cluster.ShardStore. The run row is
// updated first, so a lost lease refuses the plan before a shard row is written, and a
// crash between the two writes is impossible: they commit together or not at all.
func (s *Store) PlanShards(ctx context.Context, owner string, ref cluster.Ref, plan []execute.ShardSlice) error {
	if len(plan) == 0 {
		return errors.New("plan shards: the plan is empty")
	}
	if len(plan) > shard.MaxCount {
		return fmt.Errorf("plan shards: %d shards is more than %d", len(plan), shard.MaxCount)
	}
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var parent []struct {
			Pool        string `bun:"pool"`
			MaxAttempts int    `bun:"max_attempts"`
		}
		err := tx.NewRaw(s.q(`UPDATE sluice_runs SET status = 'sharded',
  owner = NULL, owner_listen = NULL, lease_expires_at = NULL
WHERE `+fence+`
RETURNING pool, max_attempts`), ref.ID, owner, ref.Epoch).Scan(ctx, &parent)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if len(parent) == 0 {
			return leaseLost(ref)
		}
		var b strings.Builder
		b.WriteString(`INSERT INTO sluice_shards (run_id, shard_index, shard_count, pool, status, key_lo, key_hi,
  key_nulls, weight, max_attempts, created_at) VALUES `)
		args := make([]any, 0, len(plan)*10)
		for i, sl := range plan {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, {now})")
			var lo, hi any
			nulls := false
			if sl.Range != nil {
				lo, hi, nulls = sl.Range.Lo, sl.Range.Hi, sl.Range.Nulls
			}
			args = append(args, ref.ID, sl.Index, len(plan), parent[0].Pool, lo, hi, nulls, sl.Weight, parent[0].MaxAttempts)
		}
		b.WriteString(" ON CONFLICT (run_id, shard_index) DO NOTHING")
		if _, err := tx.NewRaw(s.q(b.String()), args...).Exec(ctx); err != nil {
			return fmt.Errorf("insert the shard rows: %w", err)
		}
		return s.notifyWork(ctx, tx)
	})
	return translate("plan shards of run "+ref.ID, err)
}

// ClaimShards moves up to n pending shards of pools to running for owner in one
// statement, largest first; see cluster.ShardStore. The parents' configs are read after
// the claim (they never change), so the claim itself stays one statement on both
// dialects: SQLite's RETURNING cannot read a joined table.
func (s *Store) ClaimShards(ctx context.Context, owner cluster.Owner, pools []string, n int, ttl time.Duration) ([]cluster.ClaimedShard, error) {
	if n <= 0 || len(pools) == 0 {
		return nil, nil
	}
	if owner.InstanceID == "" {
		return nil, errors.New("claim shards: the owner has no instance id")
	}
	var rows []shardClaimRow
	query, inPools, prepare := s.inPools(s.d.claimShards, pools)
	err := s.claimRows(ctx, &rows, prepare, query, owner.InstanceID, owner.Listen, ttl.Milliseconds(), inPools, n)
	if err != nil {
		return nil, translate("claim shards", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	parents, err := s.shardParents(ctx, rows)
	if err != nil {
		// The shards are ours now; their leases expire and a peer reclaims them.
		return nil, translate("read the runs of claimed shards", err)
	}
	out := make([]cluster.ClaimedShard, 0, len(rows))
	for _, r := range rows {
		p, ok := parents[r.RunID]
		if !ok {
			continue // deleted meanwhile: only a terminal run can be, so nothing to run
		}
		// The shard keeps its own attempts and running time: timeout_secs bounds each
		// shard across its attempts, as it bounds a run (SPEC §3).
		p.Epoch, p.Attempt, p.MaxAttempts, p.ElapsedMS = r.LeaseEpoch, r.Attempt, r.MaxAttempts, r.ElapsedMS
		out = append(out, cluster.ClaimedShard{
			Ref:     cluster.ShardRef{RunID: r.RunID, Index: r.Index, Epoch: r.LeaseEpoch},
			Attempt: r.Attempt, MaxAttempts: r.MaxAttempts, Slice: r.slice(), Run: p,
		})
	}
	slices.SortFunc(out, func(a, b cluster.ClaimedShard) int {
		if c := cmp.Compare(b.Slice.Weight, a.Slice.Weight); c != 0 {
			return c
		}
		if c := strings.Compare(a.Ref.RunID, b.Ref.RunID); c != 0 {
			return c
		}
		return a.Ref.Index - b.Ref.Index
	})
	return out, nil
}

// shardParents reads the claim columns of the runs the rows belong to.
func (s *Store) shardParents(ctx context.Context, rows []shardClaimRow) (map[string]cluster.Claimed, error) {
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		if !slices.Contains(ids, r.RunID) {
			ids = append(ids, r.RunID)
		}
	}
	var runs []claimedRow
	if err := s.db.NewRaw("SELECT "+claimedColumns("")+" FROM sluice_runs WHERE id IN (?)", bun.In(ids)).
		Scan(ctx, &runs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	out := make(map[string]cluster.Claimed, len(runs))
	for _, r := range runs {
		out[r.ID] = r.claimed()
	}
	return out, nil
}

// RenewShards extends the leases of held in one statement; see cluster.ShardStore.
func (s *Store) RenewShards(ctx context.Context, owner string, held []cluster.ShardRef, ttl time.Duration) ([]cluster.ShardRef, error) {
	if len(held) == 0 {
		return nil, nil
	}
	var b strings.Builder
	args := []any{ttl.Milliseconds(), owner}
	b.WriteString(`UPDATE sluice_shards SET lease_expires_at = {now} + ?
WHERE owner = ? AND status = 'running' AND lease_expires_at > {now}
  AND (run_id, shard_index, lease_epoch) IN (VALUES `)
	for i, r := range held {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?)")
		args = append(args, r.RunID, r.Index, r.Epoch)
	}
	b.WriteString(") RETURNING run_id, shard_index, lease_epoch")
	var rows []struct {
		RunID string `bun:"run_id"`
		Index int    `bun:"shard_index"`
		Epoch int64  `bun:"lease_epoch"`
	}
	if err := s.db.NewRaw(s.q(b.String()), args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("renew shard leases", err)
	}
	out := make([]cluster.ShardRef, len(rows))
	for i, r := range rows {
		out[i] = cluster.ShardRef{RunID: r.RunID, Index: r.Index, Epoch: r.Epoch}
	}
	return out, nil
}

// ShardProgress records the counters of an owned shard; run.ErrLeaseLost when the fence
// fails.
func (s *Store) ShardProgress(ctx context.Context, owner string, ref cluster.ShardRef, p cluster.Progress) error {
	res, err := s.db.NewRaw(s.q(`UPDATE sluice_shards SET rows_read = ?, rows_written = ?, pages = ?, bytes = ?,
  elapsed_ms = elapsed_base_ms + ?
WHERE `+shardFence), p.RowsRead, p.RowsWritten, p.Pages, p.Bytes, p.ElapsedMS,
		ref.RunID, ref.Index, owner, ref.Epoch).Exec(ctx)
	if err != nil {
		return translate(fmt.Sprintf("record progress of shard %d of run %s", ref.Index, ref.RunID), err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return shardLeaseLost(ref)
	}
	return nil
}

func shardLeaseLost(ref cluster.ShardRef) error {
	return fmt.Errorf("shard %d of run %s at epoch %d: %w", ref.Index, ref.RunID, ref.Epoch, run.ErrLeaseLost)
}
