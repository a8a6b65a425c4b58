package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// Claim moves up to n pending runs of pools to running for owner in one statement,
// oldest first; see cluster.Store.
func (s *Store) Claim(ctx context.Context, owner cluster.Owner, pools []string, n int, ttl time.Duration) ([]cluster.Claimed, error) {
	var rows []claimedRow
	// The run's claim names the owner twice: the lease and the attempt record.
	asked, err := runLeases().claim(ctx, s, s.d.claim, owner, pools, n, &rows,
		owner.InstanceID, owner.Listen, ttl.Milliseconds(), owner.InstanceID)
	if err != nil {
		return nil, translate("claim runs", err)
	}
	if !asked {
		return nil, nil
	}
	out := make([]cluster.Claimed, len(rows))
	for i, r := range rows {
		out[i] = r.claimed()
	}
	// RETURNING follows no order; callers start the oldest first.
	slices.SortFunc(out, func(a, b cluster.Claimed) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// claimRows runs a claim statement (bun's form, see scanPrepared) into dest: inside an
// immediate transaction where the dialect needs one (SQLite), as a single statement
// otherwise, prepared when prepare says it may be. No row is no error.
func (s *Store) claimRows(ctx context.Context, dest any, prepare bool, query string, args ...any) error {
	claim := func(ctx context.Context, db bun.IDB) error {
		err := s.scanPrepared(ctx, db, prepare, dest, query, args...)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	}
	if s.d.claimInTx {
		return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return claim(ctx, tx) })
	}
	return claim(ctx, s.db)
}

// Renew extends the leases of held in one statement and returns the refs it renewed; a
// ref missing from the answer lost its lease (another epoch, another owner, expired).
func (s *Store) Renew(ctx context.Context, owner string, held []cluster.Ref, ttl time.Duration) ([]cluster.Ref, error) {
	out, err := runLeases().renew(ctx, s, owner, held, ttl)
	return out, translate("renew leases", err)
}

// Progress records the counters of an owned run; run.ErrLeaseLost when the fence fails.
// Counters are the current attempt's; elapsed time adds up across attempts.
func (s *Store) Progress(ctx context.Context, owner string, ref cluster.Ref, p cluster.Progress) error {
	return translate("record progress of run "+ref.ID, runLeases().progress(ctx, s, owner, ref, p))
}

func leaseLost(ref cluster.Ref) error { return runLeases().lost(ref) }

// Finish ends an owned run in one transaction: status, counters, error, the attempt's
// outcome, the run's last log lines, the callback outbox row and the promotion of a
// queued sibling.
//
// It is the hottest write of the server, so it is kept to few statements: the pipeline
// key comes from the Outcome when the caller knows it, and the log counters move in the
// status UPDATE — by every line, which is right unless the lines reach a cap, the rare
// case corrected afterwards.
func (s *Store) Finish(ctx context.Context, owner string, ref cluster.Ref, o cluster.Outcome, build runs.CallbackBuilder) error {
	f, err := prepareFinish(ref, o)
	if err != nil {
		return err
	}
	return s.finishAlone(ctx, owner, f, build)
}

// finishAlone runs one prepared finish in its own transaction.
func (s *Store) finishAlone(ctx context.Context, owner string, f preparedFinish, build runs.CallbackBuilder) error {
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := s.lockOutcomePipeline(ctx, tx, f.ref, f.o); err != nil {
			return err
		}
		return s.finishInTx(ctx, tx, owner, f, build)
	})
	return translate("finish run "+f.ref.ID, err)
}

// preparedFinish is a finish checked and with its log rows encoded: what finishInTx
// needs, computed before any transaction begins.
type preparedFinish struct {
	ref      cluster.Ref
	o        cluster.Outcome
	logRows  []logRow
	addLines int
	addBytes int64
	index    int // the finish's place in its batch (FinishBatch)
}

// prepareFinish checks what the domain allows a finish to say and encodes its lines.
func prepareFinish(ref cluster.Ref, o cluster.Outcome) (preparedFinish, error) {
	to := run.Status(o.Status)
	if !to.Terminal() {
		return preparedFinish{}, &run.TransitionError{From: run.Running, To: to}
	}
	if o.Retry && to != run.Failed {
		return preparedFinish{}, fmt.Errorf("finish run %s: only a failed attempt is retried, not a %s one", ref.ID, to)
	}
	logRows, err := prepareLogs(o.Logs)
	if err != nil {
		return preparedFinish{}, fmt.Errorf("finish run %s: %w", ref.ID, err)
	}
	addLines, addBytes := logTotals(logRows)
	return preparedFinish{ref: ref, o: o, logRows: logRows, addLines: addLines, addBytes: addBytes}, nil
}

// finishInTx writes one finish inside tx, whose caller took the run's pipeline-key lock
// (lockOutcomePipeline). A failed fence is run.ErrLeaseLost and has written nothing, so
// a batch's transaction may go on with its other finishes.
func (s *Store) finishInTx(ctx context.Context, tx bun.Tx, owner string, f preparedFinish, build runs.CallbackBuilder) error {
	// The key's oldest queued run comes back with the row: with none (the common
	// case) promotion has nothing to do and costs no statement. The key's shared lock,
	// taken above, keeps a queued run from appearing unseen (see promote).
	query, args := s.finishStatement(owner, f.ref, f.o, f.logRows, f.addLines, f.addBytes)
	var rows []finishRow
	err := s.scanPrepared(ctx, tx, true, &rows, query, args...)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if len(rows) == 0 {
		return leaseLost(f.ref)
	}
	return s.afterFinish(ctx, tx, f, &rows[0], build)
}

// afterFinish is what a finish owes once its status UPDATE matched row: the log lines the
// statement did not write, then for a terminal run its terminal writes and the promotion
// of its key's queued run.
func (s *Store) afterFinish(ctx context.Context, tx bun.Tx, f preparedFinish, row *finishRow, build runs.CallbackBuilder) error {
	rec, err := row.record()
	if err != nil {
		return err
	}
	if len(f.logRows) > 0 && !rec.LogTruncated && !row.LogsWritten {
		if err := finishLogs(ctx, tx, rec, f.logRows, f.addLines, f.addBytes); err != nil {
			return fmt.Errorf("write the run's last log lines: %w", err)
		}
	}
	if rec.Status == string(run.Pending) {
		// Retried: the run keeps its key, its sealed secrets and its callback. Nobody
		// is woken: it is not claimable before its delay (see NextDue).
		return nil
	}
	if err := s.terminalWrites(ctx, tx, rec, build); err != nil {
		return err
	}
	if row.QueuedID == "" {
		return nil
	}
	return s.promote(ctx, tx, rec.Tenant, rec.Name)
}

// finishRow is the row Finish's statement returns: the run, its key's oldest queued run
// ("" when none), and whether the statement itself inserted the log lines (only the
// PostgreSQL form does, and only under the caps).
type finishRow struct {
	runRow
	QueuedID    string `bun:"queued_id"`
	LogsWritten bool   `bun:"logs_written"`
}

// finishStatement is Finish's status UPDATE, in bun's form (see scanPrepared). Where the
// dialect has data-modifying WITH (PostgreSQL), the run's last log lines ride in the same
// statement — one round trip fewer for every finished run — whenever they fit under the
// caps; the rare batch that reaches a cap, and SQLite, write them after (finishLogs). The
// lines go as five arrays, so the statement's text is the same for any number of lines
// (none included) and one prepared statement serves every finish.
func (s *Store) finishStatement(owner string, ref cluster.Ref, o cluster.Outcome, logRows []logRow, addLines int, addBytes int64) (string, []any) {
	// A retry (the domain decided it: run.Run.Fail) returns the run to pending, due after
	// the delay — unless its cancel was requested meanwhile, which the domain ends failed:
	// "retry" below is that one condition, written three times over the row as it was.
	update := `UPDATE sluice_runs SET status = CASE WHEN ? AND NOT cancel_requested THEN 'pending' ELSE ? END,
  ` + setCounters + `,
  error_code = ?, error_message = ?,
  finished_at = CASE WHEN ? AND NOT cancel_requested THEN NULL ELSE {now} END,
  not_before = CASE WHEN ? AND NOT cancel_requested THEN {now} + ? ELSE not_before END,
  ` + releaseLease + `,
  log_lines = CASE WHEN log_truncated THEN log_lines ELSE log_lines + ? END,
  log_bytes = CASE WHEN log_truncated THEN log_bytes ELSE log_bytes + ? END,
  attempts = ` + s.d.closeAttemptErr + `
WHERE ` + runLeases().preparedFence() + `
RETURNING ` + runCols("")
	code, msg := nullIfEmpty(o.ErrorCode), nullIfEmpty(o.ErrorMessage)
	args := append([]any{o.Retry, o.Status}, counterArgs(o.Stats)...)
	args = append(args, code, msg, o.Retry, o.Retry, o.RetryDelay.Milliseconds(), addLines, addBytes, o.Status, code, msg)
	args = append(args, runLeases().preparedFenceArgs(owner, ref)...)
	if !s.d.dataModifyingWith {
		return update + ", " + queued("sluice_runs"), args
	}
	ns := make([]int64, len(logRows))
	ats := make([]int64, len(logRows))
	levels, msgs, attrs := make([]string, len(logRows)), make([]string, len(logRows)), make([]string, len(logRows))
	for i, r := range logRows {
		ns[i], ats[i], levels[i], msgs[i], attrs[i] = int64(i+1), r.at.UnixMilli(), r.level, r.msg, r.attrs
	}
	args = append(args, addLines, pgdialect.Array(ns), pgdialect.Array(ats), pgdialect.Array(levels), pgdialect.Array(msgs), pgdialect.Array(attrs))
	fits := logsFit("u")
	return fmt.Sprintf(`WITH u AS (%s),
l AS (INSERT INTO sluice_run_logs (run_id, seq, at, level, message, attrs)
  SELECT u.id, u.log_lines - ?::bigint + v.n, v.at, v.level, v.message, v.attrs
  FROM u, unnest(?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[]) AS v(n, at, level, message, attrs)
  WHERE %s)
SELECT u.*, %s, (%s) AS logs_written FROM u`, update, fits, queued("u"), fits), args
}

// queued is the select-list item that reads the oldest queued run of the pipeline key of
// the row t names.
func queued(t string) string {
	return `(SELECT min(q.id) FROM sluice_runs q
  WHERE q.tenant = ` + t + `.tenant AND q.name = ` + t + `.name AND q.status = 'queued') AS queued_id`
}

// logsFit is the condition, over the updated row t, under which a finish's last lines
// are inserted by its statement: the counters with the lines counted stay under both
// caps. One condition decides both whether the lines are inserted and what the row says
// of it, so the caller never re-derives it. The caps are ours, written as literals.
func logsFit(t string) string {
	return fmt.Sprintf("NOT %[1]s.log_truncated AND %[1]s.log_lines <= %[2]d AND %[1]s.log_bytes <= %[3]d", t, MaxLogLines, MaxLogBytes)
}

// withinLogCaps reports whether a run's counters, with the last lines counted, stay
// under both caps (then the lines are written uncapped).
func withinLogCaps(rec *runs.Record) bool {
	return rec.LogLines <= MaxLogLines && rec.LogBytes <= MaxLogBytes
}

// finishLogs inserts a finished run's last lines, whose counts Finish already added to
// rec's counters; lines that reach a cap are capped and the counters corrected.
func finishLogs(ctx context.Context, tx bun.Tx, rec *runs.Record, rows []logRow, addLines int, addBytes int64) error {
	before := logCounters{Lines: rec.LogLines - addLines, Bytes: rec.LogBytes - addBytes}
	if withinLogCaps(rec) {
		return insertLogs(ctx, tx, rec.ID, before.Lines+1, rows)
	}
	return writeCappedLogs(ctx, tx, rec.ID, before, rows)
}

// lockOutcomePipeline takes the shared lock of the run's pipeline key, read from the
// Outcome when the caller set it. A missing run is lease-lost: it was purged or deleted.
func (s *Store) lockOutcomePipeline(ctx context.Context, tx bun.Tx, ref cluster.Ref, o cluster.Outcome) error {
	if o.Name != "" {
		return s.lockPipelineShared(ctx, tx, o.Tenant, o.Name)
	}
	err := s.lockRunPipeline(ctx, tx, ref.ID)
	if errors.Is(err, run.ErrNotFound) {
		return leaseLost(ref)
	}
	return err
}

// HandBack returns an owned run to pending without spending an attempt, or ends it
// cancelled (with its callback) when its cancel was requested: run.Run.HandBack decides
// on the row read under its lock, fenced like every write about an owned run. It is not
// hot (drain, shutdown, a history outage), so it takes the load → verb → save shape.
func (s *Store) HandBack(ctx context.Context, owner string, ref cluster.Ref, p cluster.Progress) error {
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := s.lockRunPipeline(ctx, tx, ref.ID); err != nil {
			if errors.Is(err, run.ErrNotFound) {
				return leaseLost(ref)
			}
			return err
		}
		l, err := s.lockRun(ctx, tx, runLeases().fence(), runLeases().fenceArgs(owner, ref)...)
		if err != nil {
			return err
		}
		if l == nil {
			return leaseLost(ref)
		}
		if err := l.run.HandBack(l.now); err != nil {
			return err
		}
		rec, err := s.saveRun(ctx, tx, l, setCounters, counterArgs(p), "", nil)
		if err != nil {
			return err
		}
		if rec == nil {
			return fmt.Errorf("run %s changed under its row lock", ref.ID)
		}
		if rec.Status == string(run.Cancelled) {
			// The port passes no builder here; Options.Callbacks stands in.
			return s.afterTerminal(ctx, tx, rec, s.callbacks)
		}
		return s.notifyWork(ctx, tx)
	})
	return translate("hand back run "+ref.ID, err)
}
