package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// RecordTick records a tick without a run; see scheduling.Store.
func (s *Store) RecordTick(ctx context.Context, t scheduling.Tick) (bool, error) {
	inserted, err := s.RecordTicks(ctx, []scheduling.Tick{t})
	if err != nil {
		return false, err
	}
	return inserted[0], nil
}

// RecordTicks records ticks without runs in one transaction; see scheduling.Store.
func (s *Store) RecordTicks(ctx context.Context, ticks []scheduling.Tick) ([]bool, error) {
	if len(ticks) == 0 {
		return nil, nil
	}
	if len(ticks) > runs.MaxTickBatch {
		return nil, fmt.Errorf("record %d ticks: a batch holds at most %d", len(ticks), runs.MaxTickBatch)
	}
	keys := make([]tickKey, len(ticks))
	for i, t := range ticks {
		if t.Epoch != ticks[0].Epoch {
			return nil, fmt.Errorf("record ticks: one batch is of one term, not %d and %d", ticks[0].Epoch, t.Epoch)
		}
		keys[i] = tickKey{t.ScheduleID, t.Instant.UTC().UnixMilli()}
	}
	var inserted []bool
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		inserted = make([]bool, len(ticks))
		if err := s.checkTerm(ctx, tx, ticks[0].Epoch); err != nil {
			return err
		}
		known, err := s.readTicks(ctx, tx, keys)
		if err != nil {
			return err
		}
		w := &tickWriter{s: s}
		for i, t := range ticks {
			if _, ok := known[keys[i]]; ok {
				continue
			}
			known[keys[i]] = runs.CreateResult{}
			inserted[i] = true
			w.tick(t)
		}
		return w.flush(ctx, tx)
	})
	if err != nil {
		return nil, translate(fmt.Sprintf("record %d ticks (the first %s of schedule %s)", len(ticks),
			ticks[0].Instant.UTC().Format(time.RFC3339), ticks[0].ScheduleID), err)
	}
	return inserted, nil
}

// checkTerm is the fence of every tick write: epoch must still be the scheduler's term.
// On PostgreSQL the row is share-locked, so a takeover (which updates it) waits for the
// tick's transaction, and a tick waits for a takeover in progress and then fails.
func (s *Store) checkTerm(ctx context.Context, tx bun.Tx, epoch int64) error {
	var epochs []int64
	if err := tx.NewRaw("SELECT epoch FROM sluice_scheduler_term WHERE id = 1"+s.d.forShare).Scan(ctx, &epochs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if len(epochs) == 0 || epochs[0] != epoch {
		return fmt.Errorf("scheduler term %d is not the current one: %w", epoch, run.ErrLeaseLost)
	}
	return nil
}

// existingTick answers a tick recorded before, as a replay.
func (s *Store) existingTick(ctx context.Context, tx bun.Tx, scheduleID string, instant time.Time) (runs.CreateResult, bool, error) {
	var rows []struct {
		Status string         `bun:"status"`
		RunID  sql.NullString `bun:"run_id"`
	}
	err := tx.NewRaw("SELECT status, run_id FROM sluice_schedule_ticks WHERE schedule_id = ? AND instant = ?",
		scheduleID, instant.UnixMilli()).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return runs.CreateResult{}, false, err
	}
	if len(rows) == 0 {
		return runs.CreateResult{}, false, nil
	}
	res := runs.CreateResult{RunID: rows[0].RunID.String}
	if res.RunID != "" {
		var st []string
		if err := tx.NewRaw("SELECT status FROM sluice_runs WHERE id = ?", res.RunID).Scan(ctx, &st); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return runs.CreateResult{}, false, err
		}
		if len(st) > 0 {
			res.Status = st[0]
		}
	}
	return res, true, nil
}

type tickRow struct {
	ScheduleID   string         `bun:"schedule_id"`
	Instant      int64          `bun:"instant"`
	Status       string         `bun:"status"`
	Reason       sql.NullString `bun:"reason"`
	RunID        sql.NullString `bun:"run_id"`
	SummaryCount sql.NullInt64  `bun:"summary_count"`
	SummaryFirst sql.NullInt64  `bun:"summary_first"`
	Epoch        int64          `bun:"epoch"`
	CreatedAt    int64          `bun:"created_at"`
}

// ListTicks returns ticks of id, newest first; see scheduling.Store.
func (s *Store) ListTicks(ctx context.Context, id string, before time.Time, limit int) ([]scheduling.Tick, error) {
	bound := int64(1<<63 - 1)
	if !before.IsZero() {
		bound = before.UnixMilli()
	}
	var rows []tickRow
	err := s.db.NewRaw(`SELECT schedule_id, instant, status, reason, run_id, summary_count, summary_first, epoch, created_at
FROM sluice_schedule_ticks WHERE schedule_id = ? AND instant < ? ORDER BY instant DESC LIMIT ?`, id, bound, limit).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("list the ticks of schedule "+id, err)
	}
	out := make([]scheduling.Tick, 0, len(rows))
	for _, r := range rows {
		out = append(out, scheduling.Tick{
			ScheduleID: r.ScheduleID, Instant: fromMS(r.Instant), Status: schedule.Outcome(r.Status),
			Reason: r.Reason.String, RunID: r.RunID.String, SummaryCount: int(r.SummaryCount.Int64),
			SummaryFirst: fromMS(r.SummaryFirst.Int64), Epoch: r.Epoch, CreatedAt: fromMS(r.CreatedAt),
		})
	}
	return out, nil
}
