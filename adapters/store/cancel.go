package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// CancelQueued cancels a queued or pending run in one conditional statement, writing its
// callback outbox row (and promoting a queued sibling) in the same transaction. A run in
// another status comes back unchanged with ok=false; a missing one is run.ErrNotFound.
func (s *Store) CancelQueued(ctx context.Context, id string, build runs.CallbackBuilder) (*runs.Record, bool, error) {
	var (
		rec *runs.Record
		ok  bool
	)
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := s.lockRunPipeline(ctx, tx, id); err != nil {
			return err
		}
		var err error
		rec, err = scanRun(ctx, tx, s.q(`UPDATE sluice_runs SET status = 'cancelled', finished_at = {now}
WHERE id = ? AND status IN ('queued', 'pending')
RETURNING `+runCols("")), id)
		if err != nil {
			return err
		}
		if rec == nil {
			rec, err = s.getRun(ctx, tx, id, "")
			return err
		}
		ok = true
		return s.afterTerminal(ctx, tx, rec, build)
	})
	if err != nil {
		return nil, false, translate("cancel run "+id, err)
	}
	return rec, ok, nil
}

// RequestCancel sets the cancel flag of a running or sharded run, for its owner (or its
// shards' owners) to see. The pending shards of a sharded run are cancelled in the same
// transaction, which also ends the run when none of its shards is running; ended reports
// that. Any other status is run.ErrConflict naming it (a queued or pending run is
// cancelled with CancelQueued; a terminal one has nothing left to cancel), so a caller
// racing a status change re-reads the run; a missing run is run.ErrNotFound.
func (s *Store) RequestCancel(ctx context.Context, id string) (ended bool, err error) {
	err = s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		ended = false // a retried transaction starts over
		// A sharded run ends here when none of its shards runs, so the parent's locks come
		// first, in the order every shard end takes them.
		if err := s.lockRunPipeline(ctx, tx, id); err != nil {
			return err
		}
		var statuses []string
		err := tx.NewRaw(`UPDATE sluice_runs SET cancel_requested = TRUE
WHERE id = ? AND status IN ('running', 'sharded') RETURNING status`, id).Scan(ctx, &statuses)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if len(statuses) == 1 {
			if statuses[0] == string(run.Sharded) {
				// Pending shards are cancelled at once (SPEC §6.4); running ones see the flag.
				status, err := s.cancelPendingShards(ctx, tx, id, s.callbacks)
				if err != nil {
					return err
				}
				ended = status != ""
			}
			return s.notifyCancel(ctx, tx, id)
		}
		rec, err := s.getRun(ctx, tx, id, "")
		if err != nil {
			return err
		}
		return fmt.Errorf("run %s is %s, not running or sharded: %w", id, rec.Status, run.ErrConflict)
	})
	if err != nil {
		return false, translate("request cancel of run "+id, err)
	}
	return ended, nil
}

// Delete removes a terminal run; its labels and logs go with it (foreign keys cascade).
// A run that is not terminal is run.ErrConflict; a missing one run.ErrNotFound.
func (s *Store) Delete(ctx context.Context, id string) error {
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(`DELETE FROM sluice_runs
WHERE id = ? AND status IN ('completed', 'failed', 'cancelled')`, id).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		rec, err := s.getRun(ctx, tx, id, "")
		if err != nil {
			return err
		}
		return fmt.Errorf("run %s is %s: only terminal runs can be deleted: %w", id, rec.Status, run.ErrConflict)
	})
	return translate("delete run "+id, err)
}
