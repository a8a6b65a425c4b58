package store

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/domain/run"
)

// MarkFollowed records that a client follows the log of run id; see runs.Store. The
// UPDATE takes the run's row lock, so it waits for a finish in progress: either it lands
// before the finish, which then reads followed in the row it ends and notifies, or after,
// when the run is terminal and the follower's next read sees the end. A run already
// marked is not written again, so following a run from many clients costs one write.
//
// While the lock is held, a claim passes the row by (SKIP LOCKED) and would not look
// again before its next poll: marking a pending run therefore wakes the claimers once
// the mark commits.
func (s *Store) MarkFollowed(ctx context.Context, id string) error {
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var status []string
		if err := tx.NewRaw(`UPDATE sluice_runs SET followed = TRUE
WHERE id = ? AND NOT followed AND status IN `+activeStatuses+` RETURNING status`, id).Scan(ctx, &status); err != nil {
			return err
		}
		if len(status) == 1 && status[0] == string(run.Pending) {
			return s.notifyWork(ctx, tx)
		}
		return nil
	})
	return translate("mark run "+id+" followed", err)
}
