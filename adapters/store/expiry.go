package store

import (
	"context"
	"database/sql"
	"time"
)

// NextExpiry answers how long, by the database clock, until the earliest lease of a
// running run or shard expires; see cluster.Store. Both minimums are read from the
// partial lease indexes, so the statement costs two index probes whatever the history
// holds.
func (s *Store) NextExpiry(ctx context.Context) (time.Duration, bool, error) {
	return s.earliest(ctx, "read the earliest lease expiry", `SELECT
  (SELECT min(lease_expires_at) FROM sluice_runs WHERE status = 'running') AS runs,
  (SELECT min(lease_expires_at) FROM sluice_shards WHERE status = 'running') AS shards,
  {now} AS now`)
}

// NextDue answers how long, by the database clock, until the earliest pending run or
// shard that waits for its retry becomes claimable (≤ 0: one is due already); ok is false
// when none waits. Both minimums come from the partial due indexes, which hold only the
// waiting rows.
func (s *Store) NextDue(ctx context.Context) (time.Duration, bool, error) {
	return s.earliest(ctx, "read the earliest due retry", `SELECT
  (SELECT min(not_before) FROM sluice_runs WHERE status = 'pending' AND not_before > 0) AS runs,
  (SELECT min(not_before) FROM sluice_shards WHERE status = 'pending' AND not_before > 0) AS shards,
  {now} AS now`)
}

// earliest runs a statement answering two instants (runs, shards; NULL for none) and the
// database clock, and answers how long until the earlier of the two.
func (s *Store) earliest(ctx context.Context, what, query string) (time.Duration, bool, error) {
	var row struct {
		Runs   sql.NullInt64 `bun:"runs"`
		Shards sql.NullInt64 `bun:"shards"`
		Now    int64         `bun:"now"`
	}
	if err := s.db.NewRaw(s.q(query)).Scan(ctx, &row); err != nil {
		return 0, false, translate(what, err)
	}
	first, ok := row.Runs.Int64, row.Runs.Valid
	if row.Shards.Valid && (!ok || row.Shards.Int64 < first) {
		first, ok = row.Shards.Int64, true
	}
	if !ok {
		return 0, false, nil
	}
	return time.Duration(first-row.Now) * time.Millisecond, true, nil
}
