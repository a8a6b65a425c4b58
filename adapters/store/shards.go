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
	"github.com/sluicehq/sluice/domain/shard"
)

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
	if err := shard.ValidateCount(len(plan)); err != nil {
		return fmt.Errorf("plan shards of run %s: %w", ref.ID, err)
	}
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var parent []struct {
			Pool        string `bun:"pool"`
			MaxAttempts int    `bun:"max_attempts"`
		}
		err := tx.NewRaw(s.q(`UPDATE sluice_runs SET status = 'sharded',
  owner = NULL, owner_listen = NULL, lease_expires_at = NULL
WHERE `+runLeases().fence()+`
RETURNING pool, max_attempts`), runLeases().fenceArgs(owner, ref)...).Scan(ctx, &parent)
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
			// Each row is a shard.New: the domain checks it and decides what a new shard is.
			p := shard.NewParams{RunID: ref.ID, Index: sl.Index, Pool: parent[0].Pool, MaxAttempts: parent[0].MaxAttempts}
			if sl.Range != nil {
				p.Range = *sl.Range
			}
			sh, err := shard.New(p)
			if err != nil {
				return fmt.Errorf("shard %d: %w", sl.Index, err)
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {now})")
			var lo, hi any
			if sl.Range != nil {
				lo, hi = sh.Range().Lo, sh.Range().Hi
			}
			args = append(args, sh.RunID(), sh.Index(), len(plan), sh.Pool(), string(sh.Status()), lo, hi, sh.Range().Nulls,
				sl.Weight, sh.MaxAttempts())
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
	var rows []shardClaimRow
	_, err := shardLeases().claim(ctx, s, s.d.claimShards, owner, pools, n, &rows, owner.InstanceID, owner.Listen, ttl.Milliseconds())
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
	out, err := shardLeases().renew(ctx, s, owner, held, ttl)
	return out, translate("renew shard leases", err)
}

// ShardProgress records the counters of an owned shard; run.ErrLeaseLost when the fence
// fails.
func (s *Store) ShardProgress(ctx context.Context, owner string, ref cluster.ShardRef, p cluster.Progress) error {
	return translate(fmt.Sprintf("record progress of shard %d of run %s", ref.Index, ref.RunID),
		shardLeases().progress(ctx, s, owner, ref, p))
}
