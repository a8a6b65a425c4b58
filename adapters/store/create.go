package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// errReplay rolls back a Create whose answer is an existing run.
var errReplay = errors.New("replay")

// Create stores a new run; see runs.Store. rec.Status is set to what was stored
// (pending, or queued by serial admission). A zero rec.CreatedAt is set to now.
func (s *Store) Create(ctx context.Context, rec *runs.Record, idem *runs.Idempotency) (runs.CreateResult, error) {
	status, err := createStatus(rec)
	if err != nil {
		return runs.CreateResult{}, err
	}
	var res runs.CreateResult
	err = s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if rec.QueueLimit > 0 {
			if err := s.admitQueued(ctx, tx, rec.QueueLimit, rec.QueueInFlight); err != nil {
				return err
			}
		}
		// Only a decision that depends on the key's other runs needs the key's lock: a
		// serial run may have to queue, and a run_key must stay unique per key. A plain
		// run is inserted without waiting for its siblings' transactions.
		if rec.Serial || rec.RunKey != "" || status == string(run.Queued) {
			if err := s.lockPipeline(ctx, tx, rec.Tenant, rec.Name); err != nil {
				return err
			}
		}
		var err error
		res, err = s.createInTx(ctx, tx, rec, idem, status)
		return err
	})
	if errors.Is(err, errReplay) {
		return res, nil
	}
	if err != nil {
		return runs.CreateResult{}, translate("create run "+rec.ID, err)
	}
	rec.Status = res.Status
	return res, nil
}

// admitQueued refuses the run when limit runs are pending or queued (with inFlight runs
// the caller admitted that may not be stored yet), deciding with the insert: on PostgreSQL an advisory lock makes near-limit submits count one after the
// other (each sees the runs the previous one inserted); SQLite's immediate transactions
// already take the writer lock before the count.
func (s *Store) admitQueued(ctx context.Context, tx bun.Tx, limit int, inFlightNow func() int) error {
	n, inFlight, err := s.countQueue(ctx, tx, inFlightNow)
	if err != nil {
		return err
	}
	if n+inFlight >= limit {
		return runs.QueueFull(n, inFlight, limit)
	}
	return nil
}

// countQueue counts the pending and queued runs, and the runs admitted at once that may
// not be stored yet (inFlightNow), under the queue lock on PostgreSQL.
func (s *Store) countQueue(ctx context.Context, tx bun.Tx, inFlightNow func() int) (n, inFlight int, err error) {
	if s.d.pipelineLocks {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", s.lockKey("queue")); err != nil {
			return 0, 0, err
		}
	}
	// In flight is read before the count: a run admitted at once that returns between the
	// two committed before the count began, so it is in the count (on PostgreSQL those
	// inserts do not take the queue lock, so reading after the count could miss one).
	if inFlightNow != nil {
		inFlight = inFlightNow()
	}
	if err := tx.NewRaw("SELECT count(*) FROM sluice_runs WHERE status IN ('pending', 'queued')").Scan(ctx, &n); err != nil {
		return 0, 0, err
	}
	return n, inFlight, nil
}

// createStatus checks the status a new run may be stored with ("" is pending) and fills
// what a record may leave out.
func createStatus(rec *runs.Record) (string, error) {
	status := rec.Status
	if status == "" {
		status = string(run.Pending)
	}
	if status != string(run.Pending) && status != string(run.Queued) {
		return "", &run.TransitionError{From: run.StatusNew, To: run.Status(status)}
	}
	if rec.ID == "" {
		return "", errors.New("create run: the record has no id")
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = time.Now()
	}
	return status, nil
}

// createInTx is the body of Create inside its transaction; the caller holds the pipeline
// key's lock when the decision needs it. It returns errReplay (with res set) when the
// answer is an existing run, which must roll the transaction back.
func (s *Store) createInTx(ctx context.Context, tx bun.Tx, rec *runs.Record, idem *runs.Idempotency, status string) (runs.CreateResult, error) {
	if idem != nil {
		existing, claimed, err := s.claimIdempotency(ctx, tx, rec.ID, idem)
		if err != nil {
			return runs.CreateResult{}, err
		}
		if !claimed {
			return existing, errReplay
		}
	}
	if rec.RunKey != "" {
		var other struct {
			ID     string `bun:"id"`
			Status string `bun:"status"`
		}
		err := tx.NewRaw("SELECT id, status FROM sluice_runs WHERE tenant = ? AND name = ? AND run_key = ?",
			rec.Tenant, rec.Name, rec.RunKey).Scan(ctx, &other)
		switch {
		case err == nil:
			// The idempotency key inserted above rolls back with errReplay.
			return runs.CreateResult{RunID: other.ID, Status: other.Status}, errReplay
		case !errors.Is(err, sql.ErrNoRows):
			return runs.CreateResult{}, err
		}
	}
	if rec.Serial && status == string(run.Pending) {
		// Behind runs already waiting, or when the key's active runs fill max_active.
		var load struct {
			Queued int `bun:"queued"`
			Active int `bun:"active"`
		}
		if err := tx.NewRaw(`SELECT COALESCE(SUM(CASE WHEN status = 'queued' THEN 1 ELSE 0 END), 0) AS queued,
  COALESCE(SUM(CASE WHEN status = 'queued' THEN 0 ELSE 1 END), 0) AS active
FROM sluice_runs WHERE tenant = ? AND name = ? AND status IN `+activeStatuses,
			rec.Tenant, rec.Name).Scan(ctx, &load); err != nil {
			return runs.CreateResult{}, err
		}
		if load.Queued > 0 || load.Active >= max(rec.MaxActive, 1) {
			status = string(run.Queued)
		}
	}
	if err := s.insertRun(ctx, tx, rec, status); err != nil {
		return runs.CreateResult{}, err
	}
	if status == string(run.Pending) {
		if err := s.notifyWork(ctx, tx); err != nil {
			return runs.CreateResult{}, err
		}
	}
	return runs.CreateResult{Created: true, RunID: rec.ID, Status: status}, nil
}

// claimIdempotency inserts the key, or reports the entry that holds it (claimed=false).
// A concurrent insert of the same key waits on the unique index and then conflicts, so
// of several submits with one key exactly one claims it.
func (s *Store) claimIdempotency(ctx context.Context, tx bun.Tx, runID string, idem *runs.Idempotency) (runs.CreateResult, bool, error) {
	var inserted []string
	if err := tx.NewRaw(`INSERT INTO sluice_idempotency (scope, key, fingerprint, run_id, created_at)
VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, key) DO NOTHING RETURNING run_id`,
		idem.Scope, idem.Key, idem.Fingerprint, runID, time.Now().UnixMilli()).Scan(ctx, &inserted); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return runs.CreateResult{}, false, err
	}
	if len(inserted) == 1 {
		return runs.CreateResult{}, true, nil
	}
	var held struct {
		Fingerprint string `bun:"fingerprint"`
		RunID       string `bun:"run_id"`
	}
	if err := tx.NewRaw("SELECT fingerprint, run_id FROM sluice_idempotency WHERE scope = ? AND key = ?",
		idem.Scope, idem.Key).Scan(ctx, &held); err != nil {
		return runs.CreateResult{}, false, err
	}
	res := runs.CreateResult{RunID: held.RunID, Fingerprint: held.Fingerprint}
	var st []string
	if err := tx.NewRaw("SELECT status FROM sluice_runs WHERE id = ?", held.RunID).Scan(ctx, &st); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return runs.CreateResult{}, false, err
	}
	if len(st) == 0 {
		res.RunDeleted = true
	} else {
		res.Status = st[0]
	}
	return res, false, nil
}

// runInsert starts a multi-row INSERT of new runs; runValues gives the values of a row.
const runInsert = `INSERT INTO sluice_runs (id, name, tenant, pool, status, labels, trigger_kind,
  run_key, run_date, logical_at, serial, max_active, max_attempts, timeout_secs, config, config_sealed, callback,
  template_id, template_version, shard_count, traceparent, created_at, retry)
VALUES `

// runPlaceholders is one row of runInsert's VALUES.
const runPlaceholders = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

// runValues are the values of rec's row for runInsert, stored with status.
func runValues(rec *runs.Record, status string) ([]any, error) {
	labels := "{}"
	if len(rec.Labels) > 0 {
		b, err := json.Marshal(rec.Labels)
		if err != nil {
			return nil, fmt.Errorf("labels: %w", err)
		}
		labels = string(b)
	}
	var callback any
	if rec.Callback != nil {
		b, err := json.Marshal(rec.Callback)
		if err != nil {
			return nil, fmt.Errorf("callback: %w", err)
		}
		callback = string(b)
	}
	retry, err := encodeRetry(rec.Retry)
	if err != nil {
		return nil, err
	}
	return []any{rec.ID, rec.Name, rec.Tenant, rec.Pool, status, labels, rec.TriggerKind,
		nullIfEmpty(rec.RunKey), rec.RunDate, logicalMS(rec), rec.Serial, max(rec.MaxActive, 1), max(rec.MaxAttempts, 1),
		nullIfZero(rec.TimeoutSecs), rec.Config, rec.ConfigSealed, callback,
		nullIfEmpty(rec.TemplateID), nullIfZero(rec.TemplateVersion), max(rec.ShardCount, 1), nullIfEmpty(rec.Traceparent),
		rec.CreatedAt.UnixMilli(), retry}, nil
}

// runAudit is the audit entry stored with a new run, naming the status it was stored with.
func runAudit(rec *runs.Record, status string) runs.AuditEntry {
	e := *rec.Audit
	if e.Details != nil {
		e.Details = maps.Clone(e.Details)
		e.Details["status"] = status
	}
	return e
}

// labelRows appends rec's label rows, in key order, to a multi-row INSERT of sluice_run_labels.
func labelRows(b *strings.Builder, args []any, rec *runs.Record) []any {
	for _, k := range slices.Sorted(maps.Keys(rec.Labels)) {
		if len(args) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?)")
		args = append(args, rec.ID, k, rec.Labels[k])
	}
	return args
}

// labelsInsert starts a multi-row INSERT of sluice_run_labels.
const labelsInsert = "INSERT INTO sluice_run_labels (run_id, key, value) VALUES "

func (s *Store) insertRun(ctx context.Context, tx bun.Tx, rec *runs.Record, status string) error {
	vals, err := runValues(rec, status)
	if err != nil {
		return err
	}
	if _, err := tx.NewRaw(runInsert+runPlaceholders, vals...).Exec(ctx); err != nil {
		return err
	}
	if err := insertSecrets(ctx, tx, rec); err != nil {
		return err
	}
	if rec.Audit != nil {
		if err := insertAudit(ctx, tx, runAudit(rec, status)); err != nil {
			return fmt.Errorf("audit entry: %w", err)
		}
	}
	if len(rec.Labels) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(labelsInsert)
	args := labelRows(&b, nil, rec)
	_, err = tx.NewRaw(b.String(), args...).Exec(ctx)
	return err
}

// logicalMS is the logical instant; a run without one takes its creation time.
func logicalMS(rec *runs.Record) int64 {
	if rec.LogicalAt.IsZero() {
		return rec.CreatedAt.UnixMilli()
	}
	return rec.LogicalAt.UnixMilli()
}
