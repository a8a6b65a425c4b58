package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// addShards fills in the shard summary of the records that may have shards (a shard count
// above one) in one statement; while a run is sharded its counters are the sums over its
// shards, which hold them until the run ends and takes the totals over.
func (s *Store) addShards(ctx context.Context, recs []*runs.Record) error {
	byID := map[string]*runs.Record{}
	for _, r := range recs {
		if r != nil && r.ShardCount > 1 {
			byID[r.ID] = r
		}
	}
	if len(byID) == 0 {
		return nil
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	var rows []struct {
		RunID       string `bun:"run_id"`
		Status      string `bun:"status"`
		N           int    `bun:"n"`
		RowsRead    int64  `bun:"rows_read"`
		RowsWritten int64  `bun:"rows_written"`
		Pages       int64  `bun:"pages"`
		Bytes       int64  `bun:"bytes"`
	}
	err := s.db.NewRaw(`SELECT run_id, status, COUNT(*) AS n, SUM(rows_read) AS rows_read,
  SUM(rows_written) AS rows_written, SUM(pages) AS pages, SUM(bytes) AS bytes
FROM sluice_shards WHERE run_id IN (?) GROUP BY run_id, status`, bun.In(ids)).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	sums := map[string]runs.Stats{}
	counts := map[string]*shard.Counts{}
	for _, r := range rows {
		c := counts[r.RunID]
		if c == nil {
			c = &shard.Counts{}
			counts[r.RunID] = c
		}
		addCount(c, r.Status, r.N)
		st := sums[r.RunID]
		st.RowsRead += r.RowsRead
		st.RowsWritten += r.RowsWritten
		st.Pages += r.Pages
		st.Bytes += r.Bytes
		sums[r.RunID] = st
	}
	for id, c := range counts {
		byID[id].Shards = &runs.ShardSummary{Total: c.Total, Pending: c.Pending, Running: c.Running,
			Completed: c.Completed, Failed: c.Failed, Cancelled: c.Cancelled}
	}
	for id, st := range sums {
		rec := byID[id]
		if rec.Status == string(run.Sharded) {
			st.ElapsedMS = rec.Stats.ElapsedMS
			rec.Stats = st
		}
	}
	return nil
}

// addCount adds n shards of a stored status to c.
func addCount(c *shard.Counts, status string, n int) {
	c.Total += n
	switch shard.Status(status) {
	case shard.Pending:
		c.Pending += n
	case shard.Running:
		c.Running += n
	case shard.Completed:
		c.Completed += n
	case shard.Failed:
		c.Failed += n
	case shard.Cancelled:
		c.Cancelled += n
	}
}

// Shards lists the shards of a run with index > after, by index; see runs.Store.
func (s *Store) Shards(ctx context.Context, id string, after, limit int) ([]runs.ShardRecord, error) {
	var rows []struct {
		Index        int    `bun:"shard_index"`
		Status       string `bun:"status"`
		Attempt      int    `bun:"attempt"`
		MaxAttempts  int    `bun:"max_attempts"`
		Owner        string `bun:"owner"`
		OwnerListen  string `bun:"owner_listen"`
		KeyLo        *int64 `bun:"key_lo"`
		KeyHi        *int64 `bun:"key_hi"`
		KeyNulls     bool   `bun:"key_nulls"`
		RowsRead     int64  `bun:"rows_read"`
		RowsWritten  int64  `bun:"rows_written"`
		Pages        int64  `bun:"pages"`
		Bytes        int64  `bun:"bytes"`
		ElapsedMS    int64  `bun:"elapsed_ms"`
		ErrorCode    string `bun:"error_code"`
		ErrorMessage string `bun:"error_message"`
		ClaimedAt    int64  `bun:"claimed_at"`
		FinishedAt   int64  `bun:"finished_at"`
	}
	err := s.db.NewRaw(`SELECT shard_index, status, attempt, max_attempts, owner, owner_listen, key_lo, key_hi,
  key_nulls, rows_read, rows_written, pages, bytes, elapsed_ms, error_code, error_message, claimed_at, finished_at
FROM sluice_shards WHERE run_id = ? AND shard_index > ? ORDER BY shard_index LIMIT ?`, id, after, limit).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("list the shards of run "+id, err)
	}
	out := make([]runs.ShardRecord, len(rows))
	for i, r := range rows {
		out[i] = runs.ShardRecord{Index: r.Index, Status: r.Status, Attempt: r.Attempt, MaxAttempts: r.MaxAttempts,
			Owner: r.Owner, OwnerListen: r.OwnerListen, KeyNulls: r.KeyNulls,
			Stats: runs.Stats{RowsRead: r.RowsRead, RowsWritten: r.RowsWritten, Pages: r.Pages, Bytes: r.Bytes,
				ElapsedMS: r.ElapsedMS},
			ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage, ClaimedAt: fromMS(r.ClaimedAt), FinishedAt: fromMS(r.FinishedAt)}
		if r.KeyLo != nil && r.KeyHi != nil {
			out[i].HasRange, out[i].KeyLo, out[i].KeyHi = true, *r.KeyLo, *r.KeyHi
		}
	}
	return out, nil
}
