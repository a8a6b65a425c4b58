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
	"github.com/sluicehq/sluice/domain/shard"
)

// Every transaction that ends a shard locks in one order — the parent's pipeline key
// (shared), the parent's row, then shard rows — so a shard finishing, a shard reclaimed,
// the backstop and a cancel of the parent never wait on each other in a cycle. Holding
// the parent's row also serialises the ends of sibling shards, so exactly one of them
// sees no unfinished sibling and ends the parent.

// lockParent takes the locks of a shard's parent and reads its cancel flag. A missing
// parent is run.ErrNotFound.
func (s *Store) lockParent(ctx context.Context, tx bun.Tx, runID string) (cancelRequested bool, err error) {
	if err := s.lockRunPipeline(ctx, tx, runID); err != nil {
		return false, err
	}
	var row struct {
		CancelRequested bool `bun:"cancel_requested"`
	}
	err = tx.NewRaw("SELECT cancel_requested FROM sluice_runs WHERE id = ?"+s.d.forUpdate, runID).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("run %s: %w", runID, run.ErrNotFound)
	}
	return row.CancelRequested, err
}

// settleParent ends a sharded run once none of its shards is pending or running, with the
// outcome shard.ParentOutcome decides, its counters summed over the shards, the
// attempt's outcome, its callback row and the promotion of a queued sibling. It answers
// the status it ended the run with, or "" while shards are unfinished. The caller holds
// lockParent's locks.
func (s *Store) settleParent(ctx context.Context, tx bun.Tx, runID string, cancelRequested bool, build runs.CallbackBuilder) (string, error) {
	var rows []struct {
		Status string `bun:"status"`
		N      int    `bun:"n"`
	}
	if err := tx.NewRaw("SELECT status, COUNT(*) AS n FROM sluice_shards WHERE run_id = ? GROUP BY status", runID).
		Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("count the shards of run %s: %w", runID, err)
	}
	var c shard.Counts
	for _, r := range rows {
		addCount(&c, r.Status, r.N)
	}
	status, done, e := shard.ParentOutcome(c, cancelRequested)
	if !done {
		return "", nil
	}
	if e != nil {
		var err error
		if e, err = s.starvedShards(ctx, tx, runID, c, e); err != nil {
			return "", err
		}
	}
	var code, msg string
	if e != nil {
		code, msg = string(e.Code), e.Message
	}
	sum := func(col string) string {
		return "(SELECT COALESCE(SUM(" + col + "), 0) FROM sluice_shards WHERE run_id = sluice_runs.id)"
	}
	rec, err := scanRun(ctx, tx, s.q(`UPDATE sluice_runs SET status = ?, error_code = ?, error_message = ?,
  finished_at = {now}, elapsed_ms = {now} - COALESCE(started_at, created_at),
  rows_read = `+sum("rows_read")+`, rows_written = `+sum("rows_written")+`,
  pages = `+sum("pages")+`, bytes = `+sum("bytes")+`,
  attempts = `+s.d.closeAttempt+`
WHERE id = ? AND status = 'sharded'
RETURNING `+runCols("")), string(status), nullIfEmpty(code), nullIfEmpty(msg), string(status), runID)
	if err != nil {
		return "", fmt.Errorf("end sharded run %s: %w", runID, err)
	}
	if rec == nil {
		return "", nil // not sharded (any more): nothing to end
	}
	return string(status), s.afterTerminal(ctx, tx, rec, build)
}

// starvedShards is the error of a failed sharded run some of whose shards were cancelled
// because their pool stayed unserved (failPendingShards): pool_unavailable with that
// reason, which explains the shards that never ran; otherwise e as it is.
func (s *Store) starvedShards(ctx context.Context, tx bun.Tx, runID string, c shard.Counts, e *run.Error) (*run.Error, error) {
	var reasons []string
	err := tx.NewRaw(`SELECT error_message FROM sluice_shards WHERE run_id = ? AND status = 'cancelled' AND error_code = ?
ORDER BY shard_index LIMIT 1`, runID, string(run.CodePoolUnavailable)).Scan(ctx, &reasons)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read why the shards of run %s were cancelled: %w", runID, err)
	}
	if len(reasons) == 0 {
		return e, nil
	}
	msg := reasons[0]
	if c.Failed > 0 {
		msg += "; " + e.Message
	}
	return &run.Error{Code: run.CodePoolUnavailable, Message: msg}, nil
}

// FinishShard ends an owned shard and, in the same transaction, its run when it was the
// last unfinished shard; see cluster.ShardStore. The shard's last log lines go to the
// run's log.
func (s *Store) FinishShard(ctx context.Context, owner string, ref cluster.ShardRef, o cluster.Outcome, build runs.CallbackBuilder) (string, error) {
	to := shard.Status(o.Status)
	if !to.Terminal() {
		return "", &shard.TransitionError{From: shard.Running, To: to}
	}
	if o.Retry && to != shard.Failed {
		return "", fmt.Errorf("finish shard %d of run %s: only a failed attempt is retried, not a %s one", ref.Index, ref.RunID, to)
	}
	parent, err := s.inShardTx(ctx, ref, func(ctx context.Context, tx bun.Tx, cancelled bool) (string, error) {
		// A retry (shard.Shard.Fail decided it) returns the shard to pending, due after the
		// delay; the run's requested cancel ends it failed instead, as the domain rules.
		retry := o.Retry && !cancelled
		end := `status = ?, finished_at = {now}`
		args := []any{o.Status}
		if retry {
			end, args = `status = 'pending', not_before = {now} + ?`, []any{o.RetryDelay.Milliseconds()}
		}
		args = append(append(args, counterArgs(o.Stats)...), nullIfEmpty(o.ErrorCode), nullIfEmpty(o.ErrorMessage))
		leases := shardLeases()
		res, err := tx.NewRaw(s.q(`UPDATE sluice_shards SET `+end+`, `+setCounters+`,
  error_code = ?, error_message = ?, `+releaseLease+`
WHERE `+leases.fence()), append(args, leases.fenceArgs(owner, ref)...)...).Exec(ctx)
		if err := leases.fenced(ref, res, err); err != nil {
			return "", err
		}
		if len(o.Logs) > 0 {
			if err := s.appendLogs(ctx, tx, ref.RunID, o.Logs); err != nil {
				return "", fmt.Errorf("write the shard's last log lines: %w", err)
			}
		}
		if retry {
			return "", nil
		}
		return s.settleParent(ctx, tx, ref.RunID, cancelled, build)
	})
	if err != nil {
		return "", translate(fmt.Sprintf("finish shard %d of run %s", ref.Index, ref.RunID), err)
	}
	return parent, nil
}

// inShardTx runs fn in a transaction holding the locks of ref's run (lockParent); a run
// that is gone means the shard is gone with it: run.ErrLeaseLost.
func (s *Store) inShardTx(ctx context.Context, ref cluster.ShardRef,
	fn func(ctx context.Context, tx bun.Tx, cancelled bool) (string, error)) (string, error) {
	var parent string
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		cancelled, err := s.lockParent(ctx, tx, ref.RunID)
		if errors.Is(err, run.ErrNotFound) {
			return shardLeases().lost(ref)
		}
		if err != nil {
			return err
		}
		parent, err = fn(ctx, tx, cancelled)
		return err
	})
	return parent, err
}

// HandBackShard returns an owned shard to pending without spending an attempt, or ends it
// cancelled when its run's cancel was requested; see cluster.ShardStore. shard.Shard.HandBack
// decides on the row read under its lock, fenced like every write about an owned shard.
func (s *Store) HandBackShard(ctx context.Context, owner string, ref cluster.ShardRef, p cluster.Progress, build runs.CallbackBuilder) (string, error) {
	parent, err := s.inShardTx(ctx, ref, func(ctx context.Context, tx bun.Tx, cancelled bool) (string, error) {
		l, err := s.lockShard(ctx, tx, shardLeases().fence(), shardLeases().fenceArgs(owner, ref)...)
		if err != nil {
			return "", err
		}
		if l == nil {
			return "", shardLeases().lost(ref)
		}
		if err := l.shard.HandBack(cancelled, l.now); err != nil {
			return "", err
		}
		if err := s.saveShard(ctx, tx, l, setCounters, counterArgs(p)); err != nil {
			return "", err
		}
		if !l.shard.Status().Terminal() {
			return "", s.notifyWork(ctx, tx)
		}
		return s.settleParent(ctx, tx, ref.RunID, cancelled, build)
	})
	if err != nil {
		return "", translate(fmt.Sprintf("hand back shard %d of run %s", ref.Index, ref.RunID), err)
	}
	return parent, nil
}

// cancelPendingShards cancels the pending shards of a run whose cancel was just requested
// and ends the run when no shard of it is running; the caller holds lockParent's locks.
func (s *Store) cancelPendingShards(ctx context.Context, tx bun.Tx, runID string, build runs.CallbackBuilder) (string, error) {
	if _, err := tx.NewRaw(s.q(`UPDATE sluice_shards SET status = 'cancelled', finished_at = {now}
WHERE run_id = ? AND status = 'pending'`), runID).Exec(ctx); err != nil {
		return "", fmt.Errorf("cancel the pending shards of run %s: %w", runID, err)
	}
	return s.settleParent(ctx, tx, runID, true, build)
}
