package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
)

// purgeBatchTimeout bounds one purge transaction; the pass as a whole has none, so a
// backlog larger than one pass can delete in a minute is still worked off, batch by batch.
const purgeBatchTimeout = time.Minute

// The purge's DELETE statements. Each deletes at most its last argument's rows, chosen
// through an index, so one transaction stays small however large the backlog is.
const (
	// Runs go oldest first through sluice_runs_finished; labels, logs, shards and sealed
	// secrets cascade in the same transaction.
	purgeRunsSQL = `DELETE FROM sluice_runs WHERE id IN (SELECT id FROM sluice_runs
  WHERE finished_at < ? AND status IN ('completed', 'failed', 'cancelled')
  ORDER BY finished_at LIMIT ?)`
	// The newest tick of a schedule is where the scheduler resumes (its last_tick): it
	// stays however old, or the ticks after it would be due again. created_at is indexed
	// (sluice_schedule_ticks_created), the newest instant found through the primary key.
	purgeTicksSQL = `DELETE FROM sluice_schedule_ticks WHERE (schedule_id, instant) IN (
  SELECT t.schedule_id, t.instant FROM sluice_schedule_ticks t
  WHERE t.created_at < ? AND t.instant < (SELECT max(n.instant) FROM sluice_schedule_ticks n
    WHERE n.schedule_id = t.schedule_id)
  LIMIT ?)`
	purgeIdempotencySQL = `DELETE FROM sluice_idempotency WHERE (scope, key) IN (
  SELECT scope, key FROM sluice_idempotency WHERE created_at < ? LIMIT ?)`
	purgeMembersSQL = `DELETE FROM sluice_members WHERE instance_id IN (
  SELECT instance_id FROM sluice_members WHERE heartbeat_at < ? LIMIT ?)`
	purgeAuditSQL = `DELETE FROM sluice_audit WHERE id IN (
  SELECT id FROM sluice_audit WHERE at < ? LIMIT ?)`
	// The newest term stays: it is the current leader's, or the last one's record.
	purgeLeadersSQL = `DELETE FROM sluice_leaders WHERE epoch IN (
  SELECT epoch FROM sluice_leaders WHERE heartbeat_at < ?
    AND epoch < (SELECT max(epoch) FROM sluice_leaders) LIMIT ?)`
)

// Purge deletes what req says has outlived its retention (runs.PurgeRequest), each kind
// in transactions of at most req.Batch() rows, pausing between transactions so waiting
// writers go first. Only one store purges a history at a time (purgeLock): while
// another holds it, Purge answers Skipped without touching anything. On an error it
// answers what the committed batches deleted along with the error.
func (s *Store) Purge(ctx context.Context, req runs.PurgeRequest) (runs.PurgeResult, error) {
	var res runs.PurgeResult
	release, ok, err := s.purgeLock(ctx)
	if err != nil {
		return res, translate("purge lock", err)
	}
	if !ok {
		res.Skipped = true
		return res, nil
	}
	defer release()
	batch := req.Batch()
	if req.BatchSize <= 0 && s.d.name == DialectSQLite {
		batch = sqliteBatch
	}
	steps := []struct {
		what   string
		query  string
		before time.Time
		count  *int
	}{
		{"purge runs", purgeRunsSQL, req.RunsBefore, &res.Runs},
		{"purge schedule ticks", purgeTicksSQL, req.RunsBefore, nil},
		{"purge membership rows", purgeMembersSQL, req.RunsBefore, nil},
		{"purge idempotency keys", purgeIdempotencySQL, req.IdempotencyBefore, nil},
		{"purge audit entries", purgeAuditSQL, req.AuditBefore, &res.Audit},
		{"purge leader terms", purgeLeadersSQL, req.AuditBefore, nil},
		{"purge console sign-outs", purgeSignoutsSQL, req.SignoutsBefore, nil},
	}
	for _, st := range steps {
		if st.before.IsZero() {
			continue
		}
		n, err := s.deleteInBatches(ctx, st.query, st.before.UnixMilli(), batch)
		if st.count != nil {
			*st.count = n
		}
		if err != nil {
			return res, translate(st.what, err)
		}
	}
	return res, nil
}

// deleteInBatches runs query (a DELETE of at most batch rows older than before) in
// transactions of its own until one deletes fewer than batch rows, and answers how many
// rows it deleted in all.
func (s *Store) deleteInBatches(ctx context.Context, query string, before int64, batch int) (int, error) {
	total := 0
	for {
		n, err := s.deleteBatch(ctx, query, before, batch)
		total += n
		if err != nil || n < batch {
			return total, err
		}
		if err := s.yieldWriter(ctx); err != nil {
			return total, err
		}
	}
}

func (s *Store) deleteBatch(ctx context.Context, query string, before int64, batch int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, purgeBatchTimeout)
	defer cancel()
	var n int64
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(query, before, batch).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}

// sqliteYield is the pause between two purge transactions on a SQLite file. A writer
// that found the database locked sleeps in SQLite's busy handler, at most 100 ms between
// attempts; pausing that long lets every writer that queued behind a batch (a lease
// renewal, a finish, a submit) take the lock before the next batch does, so none waits
// for more than one batch. PostgreSQL needs no pause: the purge deletes only terminal
// rows, which no other writer locks, and each batch commits on its own.
const sqliteYield = 100 * time.Millisecond

// sqliteBatch is the default batch on SQLite, below runs.MaxPurgeBatch: deleting 10,000
// runs with 100,000 log lines held the only writer for 5 s on a busy 2-core machine
// (sluice-bench --suite history), as long as busy_timeout, so a lease renewal queued
// behind one batch could fail. 1,000 keeps a batch to a tenth of that.
const sqliteBatch = 1_000

func (s *Store) yieldWriter(ctx context.Context) error {
	if s.d.name != DialectSQLite {
		return ctx.Err()
	}
	t := time.NewTimer(sqliteYield)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
