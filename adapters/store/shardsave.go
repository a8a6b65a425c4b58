package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// Shards take the cold paths' load → verb → save shape of runs (see runsave.go): hand
// back and reclaim read the row under its lock, shard.Shard decides, saveShard writes.

type shardRow struct {
	RunID       string `bun:"run_id"`
	Index       int    `bun:"shard_index"`
	Pool        string `bun:"pool"`
	Status      string `bun:"status"`
	KeyLo       *int64 `bun:"key_lo"`
	KeyHi       *int64 `bun:"key_hi"`
	KeyNulls    bool   `bun:"key_nulls"`
	Attempt     int    `bun:"attempt"`
	MaxAttempts int    `bun:"max_attempts"`
	Owner       string `bun:"owner"`
	LeaseEpoch  int64  `bun:"lease_epoch"`
	ClaimedAt   int64  `bun:"claimed_at"`
	FinishedAt  int64  `bun:"finished_at"`
	ErrorCode   string `bun:"error_code"`
	Message     string `bun:"error_message"`
	NotBefore   int64  `bun:"not_before"`
}

const shardRowColumns = "run_id, shard_index, pool, status, key_lo, key_hi, key_nulls, attempt, max_attempts, owner, " +
	"lease_epoch, claimed_at, finished_at, error_code, error_message, not_before"

// snapshot rebuilds the domain state of a shard row, so the domain decides what happens
// to it; a status the domain does not know is an error, never guessed at.
func (r shardRow) snapshot() (shard.Snapshot, error) {
	st, err := shard.ParseStatus(r.Status)
	if err != nil {
		return shard.Snapshot{}, fmt.Errorf("shard %d of run %s: %w", r.Index, r.RunID, err)
	}
	rng := shard.Range{Index: r.Index}
	if r.KeyLo != nil && r.KeyHi != nil {
		rng.Lo, rng.Hi, rng.Nulls = *r.KeyLo, *r.KeyHi, r.KeyNulls
	}
	snap := shard.Snapshot{RunID: r.RunID, Index: r.Index, Pool: r.Pool, Range: rng, Status: st,
		Attempt: r.Attempt, MaxAttempts: r.MaxAttempts, Owner: r.Owner, ClaimedAt: fromMS(r.ClaimedAt),
		FinishedAt: fromMS(r.FinishedAt), NotBefore: fromMS(r.NotBefore)}
	if r.ErrorCode != "" {
		snap.Error = &run.Error{Code: run.ErrorCode(r.ErrorCode), Message: r.Message}
	}
	return snap, nil
}

// lockedShard is a shard row read under its row lock, the domain's copy of it, and the
// database clock at the read.
type lockedShard struct {
	epoch int64
	shard *shard.Shard
	now   time.Time
}

// lockShard reads the one shard that where (with args) selects, under its row lock; nil
// when none does. The caller holds the parent's locks first (lockParent).
func (s *Store) lockShard(ctx context.Context, tx bun.Tx, where string, args ...any) (*lockedShard, error) {
	row, err := lockRow[struct {
		shardRow
		DBNow int64 `bun:"db_now"`
	}](ctx, s, tx, "sluice_shards", shardRowColumns, where, args...)
	if err != nil || row == nil {
		return nil, err
	}
	snap, err := row.snapshot()
	if err != nil {
		return nil, err
	}
	return &lockedShard{epoch: row.LeaseEpoch, shard: shard.Rehydrate(snap), now: fromMS(row.DBNow)}, nil
}

// saveShard writes the lifecycle state the verb left in l.shard, read through its
// getters, plus set (with setArgs) for the counters, fenced on the lease epoch lockShard
// read. Under the row lock the fence cannot fail; if it does, the row changed under the
// lock and the transaction is refused.
func (s *Store) saveShard(ctx context.Context, tx bun.Tx, l *lockedShard, set string, setArgs []any) error {
	sh := l.shard
	var code, msg any
	if e := sh.Error(); e != nil {
		code, msg = string(e.Code), e.Message
	}
	release := ""
	if sh.Owner() == "" {
		release = "owner_listen = NULL, lease_expires_at = NULL, "
	}
	if set != "" {
		set = ", " + set
	}
	args := []any{string(sh.Status()), sh.Attempt(), nullIfEmpty(sh.Owner()), msOrNull(sh.ClaimedAt()),
		msOrNull(sh.FinishedAt()), code, msg, msOrZero(sh.NotBefore())}
	args = append(args, setArgs...)
	args = append(args, sh.RunID(), sh.Index(), l.epoch)
	res, err := tx.NewRaw(s.q(`UPDATE sluice_shards SET `+release+`status = ?, attempt = ?, owner = ?, claimed_at = ?,
  finished_at = ?, error_code = ?, error_message = ?, not_before = ?`+set+`
WHERE run_id = ? AND shard_index = ? AND lease_epoch = ?`), args...).Exec(ctx)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("shard %d of run %s changed under its row lock", sh.Index(), sh.RunID())
	}
	return nil
}
