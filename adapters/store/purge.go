package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Purge deletes terminal runs finished before cutoff (their labels and logs cascade),
// idempotency keys created before idemCutoff, membership rows whose last heartbeat is
// older than cutoff, and schedule ticks recorded before cutoff except the newest of each
// schedule; it returns how many runs it deleted. Callback outbox rows stay: a run's
// callback is still owed after the run is gone.
func (s *Store) Purge(ctx context.Context, cutoff, idemCutoff time.Time) (int, error) {
	var n int64
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(`DELETE FROM sluice_runs
WHERE status IN ('completed', 'failed', 'cancelled') AND finished_at < ?`, cutoff.UnixMilli()).Exec(ctx)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		if _, err := tx.NewRaw("DELETE FROM sluice_idempotency WHERE created_at < ?", idemCutoff.UnixMilli()).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.NewRaw("DELETE FROM sluice_members WHERE heartbeat_at < ?", cutoff.UnixMilli()).Exec(ctx); err != nil {
			return err
		}
		// The newest tick of a schedule is where the scheduler resumes (its last_tick): it
		// stays however old, or the ticks after it would be due again.
		_, err = tx.NewRaw(`DELETE FROM sluice_schedule_ticks
WHERE created_at < ? AND instant < (SELECT max(n.instant) FROM sluice_schedule_ticks n
  WHERE n.schedule_id = sluice_schedule_ticks.schedule_id)`, cutoff.UnixMilli()).Exec(ctx)
		return err
	})
	if err != nil {
		return 0, translate("purge history", err)
	}
	return int(n), nil
}
