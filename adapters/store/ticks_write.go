package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// readRunKeys reads the runs the batch's run keys name already.
func (s *Store) readRunKeys(ctx context.Context, tx bun.Tx, batch []runs.TickCreate, st *tickState) error {
	args := make([]any, 0, 3*len(batch))
	for _, tc := range batch {
		if tc.Rec.RunKey != "" {
			args = append(args, tc.Rec.Tenant, tc.Rec.Name, tc.Rec.RunKey)
		}
	}
	if len(args) == 0 {
		return nil
	}
	var rows []struct {
		Tenant string `bun:"tenant"`
		Name   string `bun:"name"`
		RunKey string `bun:"run_key"`
		ID     string `bun:"id"`
		Status string `bun:"status"`
	}
	err := tx.NewRaw(`SELECT tenant, name, run_key, id, status FROM sluice_runs
WHERE (tenant, name, run_key) IN (VALUES `+values(len(args)/3, 3)+`)`, args...).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	for _, r := range rows {
		st.runs[runKey{r.Tenant, r.Name, r.RunKey}] = runs.CreateResult{RunID: r.ID, Status: r.Status}
	}
	return nil
}

// readBusy marks the batch's schedules that have queued or active runs of their pipeline
// key, as scheduleBusy does for one: one EXISTS per schedule, in one statement.
func (s *Store) readBusy(ctx context.Context, tx bun.Tx, batch []runs.TickCreate, st *tickState) error {
	seen := make(map[busyKey]bool, len(batch))
	var keys []busyKey
	args := make([]any, 0, 5*len(batch))
	for _, tc := range batch {
		k := busyKey{tc.Rec.Tenant, tc.Rec.Name, tc.Tick.ScheduleID}
		if seen[k] {
			continue
		}
		seen[k] = true
		prefix := schedule.RunKeyPrefix(k.schedule)
		args = append(args, len(keys), k.tenant, k.name, len(prefix), prefix)
		keys = append(keys, k)
	}
	var busy []int
	err := tx.NewRaw(`SELECT v.column1 FROM (VALUES `+values(len(keys), 5)+`) AS v
WHERE EXISTS (SELECT 1 FROM sluice_runs r WHERE r.tenant = v.column2 AND r.name = v.column3
  AND r.status IN `+activeStatuses+` AND substr(r.run_key, 1, v.column4) = v.column5)`, args...).Scan(ctx, &busy)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	for _, i := range busy {
		st.busy[keys[i]] = true
	}
	return nil
}

// tickWriter gathers a batch's new rows and writes each table's in one INSERT.
type tickWriter struct {
	s                   *Store
	runs, labels, audit []any
	nRuns, nAudit       int
	runSQL, labelSQL    strings.Builder
	ticks               []any
	nTicks              int
	wake                bool // a pending run: the claim loops are woken at commit
}

// run adds rec's run, label and audit rows, stored with status.
func (w *tickWriter) run(rec *runs.Record, status string) error {
	vals, err := runValues(rec, status)
	if err != nil {
		return err
	}
	if w.nRuns > 0 {
		w.runSQL.WriteString(", ")
	}
	w.runSQL.WriteString(runPlaceholders)
	w.runs = append(w.runs, vals...)
	w.nRuns++
	w.labels = labelRows(&w.labelSQL, w.labels, rec)
	if rec.Audit != nil {
		vals, err := auditValues(runAudit(rec, status))
		if err != nil {
			return err
		}
		w.audit = append(w.audit, vals...)
		w.nAudit++
	}
	w.wake = w.wake || status == string(run.Pending)
	return nil
}

// tick adds a tick row.
func (w *tickWriter) tick(t scheduling.Tick) {
	w.ticks = append(w.ticks, t.ScheduleID, t.Instant.UTC().UnixMilli(), string(t.Status), nullIfEmpty(t.Reason),
		nullIfEmpty(t.RunID), nullIfZero(t.SummaryCount), msOrNull(t.SummaryFirst), t.Epoch)
	w.nTicks++
}

// tickInsert starts a multi-row INSERT of tick rows; created_at is the database's now.
const tickInsert = `INSERT INTO sluice_schedule_ticks (schedule_id, instant, status, reason, run_id,
  summary_count, summary_first, epoch, created_at) VALUES `

// flush writes the gathered rows — runs before the rows that point at them — and
// starts over.
func (w *tickWriter) flush(ctx context.Context, tx bun.Tx) error {
	if w.nRuns > 0 {
		if _, err := tx.NewRaw(runInsert+w.runSQL.String(), w.runs...).Exec(ctx); err != nil {
			return err
		}
	}
	if len(w.labels) > 0 {
		if _, err := tx.NewRaw(labelsInsert+w.labelSQL.String(), w.labels...).Exec(ctx); err != nil {
			return err
		}
	}
	if w.nAudit > 0 {
		if _, err := tx.NewRaw(auditInsert+values(w.nAudit, 5), w.audit...).Exec(ctx); err != nil {
			return err
		}
	}
	if w.nTicks > 0 {
		row := "(?, ?, ?, ?, ?, ?, ?, ?, " + w.s.d.now + ")"
		sql := tickInsert + strings.TrimSuffix(strings.Repeat(row+", ", w.nTicks), ", ")
		if _, err := tx.NewRaw(sql, w.ticks...).Exec(ctx); err != nil {
			return err
		}
	}
	if w.wake {
		if err := w.s.notifyWork(ctx, tx); err != nil {
			return err
		}
	}
	*w = tickWriter{s: w.s}
	return nil
}
