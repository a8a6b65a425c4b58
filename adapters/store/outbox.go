package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/sluicehq/sluice/application/cluster"
)

// ClaimOutbox leases up to n due callbacks (next_at reached, no live lease) to owner for
// lease, in one statement; see cluster.OutboxStore.
func (s *Store) ClaimOutbox(ctx context.Context, owner string, n int, lease time.Duration) ([]cluster.OutboxItem, error) {
	if n <= 0 {
		return nil, nil
	}
	var rows []struct {
		ID        int64  `bun:"id"`
		RunID     string `bun:"run_id"`
		URL       string `bun:"url"`
		Payload   string `bun:"payload"`
		Attempts  int    `bun:"attempts"`
		CreatedAt int64  `bun:"created_at"`
	}
	err := s.db.NewRaw(s.q(s.d.claimOutbox), owner, lease.Milliseconds(), n).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("claim callbacks", err)
	}
	out := make([]cluster.OutboxItem, len(rows))
	for i, r := range rows {
		out[i] = cluster.OutboxItem{ID: r.ID, RunID: r.RunID, URL: r.URL, Payload: []byte(r.Payload),
			Attempts: r.Attempts, CreatedAt: fromMS(r.CreatedAt)}
	}
	return out, nil
}

// OutboxDelivered deletes a callback that was delivered or finally failed.
func (s *Store) OutboxDelivered(ctx context.Context, id int64) error {
	_, err := s.db.NewRaw("DELETE FROM sluice_outbox WHERE id = ?", id).Exec(ctx)
	return translate("delete delivered callback", err)
}

// OutboxRetry counts a failed delivery and schedules the next one at next, releasing
// the lease.
func (s *Store) OutboxRetry(ctx context.Context, id int64, next time.Time, lastErr string) error {
	_, err := s.db.NewRaw(`UPDATE sluice_outbox SET attempts = attempts + 1, next_at = ?, last_error = ?,
  claimed_by = NULL, claimed_until = NULL WHERE id = ?`, next.UnixMilli(), lastErr, id).Exec(ctx)
	return translate("schedule callback retry", err)
}
