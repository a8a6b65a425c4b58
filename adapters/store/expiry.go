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
	var row struct {
		Runs   sql.NullInt64 `bun:"runs"`
		Shards sql.NullInt64 `bun:"shards"`
		Now    int64         `bun:"now"`
	}
	err := s.db.NewRaw(s.q(`SELECT
  (SELECT min(lease_expires_at) FROM sluice_runs WHERE status = 'running') AS runs,
  (SELECT min(lease_expires_at) FROM sluice_shards WHERE status = 'running') AS shards,
  {now} AS now`)).Scan(ctx, &row)
	if err != nil {
		return 0, false, translate("read the earliest lease expiry", err)
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
