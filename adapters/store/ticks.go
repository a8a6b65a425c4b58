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

// CreateTick stores the run of a schedule tick with its tick row; see runs.Store.
func (s *Store) CreateTick(ctx context.Context, rec *runs.Record, tick runs.Tick) (runs.CreateResult, error) {
	status, err := createStatus(rec)
	if err != nil {
		return runs.CreateResult{}, err
	}
	instant := tick.Instant.UTC()
	var res runs.CreateResult
	err = s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		// The key's lock first (as every admission decision), then the term row.
		if err := s.lockPipeline(ctx, tx, rec.Tenant, rec.Name); err != nil {
			return err
		}
		if err := s.checkTerm(ctx, tx, tick.Epoch); err != nil {
			return err
		}
		if prior, ok, err := s.existingTick(ctx, tx, tick.ScheduleID, instant); err != nil || ok {
			res = prior
			return err
		}
		busy, err := s.scheduleBusy(ctx, tx, rec.Tenant, rec.Name, tick.ScheduleID)
		if err != nil {
			return err
		}
		outcome, reason := tick.Overlap.Decide(busy)
		if outcome == schedule.OutcomeSkipped {
			res = runs.CreateResult{Skipped: reason}
			return s.insertTick(ctx, tx, scheduling.Tick{ScheduleID: tick.ScheduleID, Instant: instant,
				Status: outcome, Reason: reason, Epoch: tick.Epoch})
		}
		if outcome == schedule.OutcomeQueued {
			status = string(run.Queued)
		}
		res, err = s.createInTx(ctx, tx, rec, nil, status)
		switch {
		case errors.Is(err, errReplay):
			// The run key, unique per (schedule, instant), names a run already — one
			// created before the schedule's tick rows were kept with their runs: the tick
			// points at it, and this transaction commits.
			outcome = schedule.OutcomeCreated
			if res.Status == string(run.Queued) {
				outcome = schedule.OutcomeQueued
			}
		case err != nil:
			return err
		case res.Status == string(run.Queued):
			outcome = schedule.OutcomeQueued
		}
		return s.insertTick(ctx, tx, scheduling.Tick{ScheduleID: tick.ScheduleID, Instant: instant,
			Status: outcome, RunID: res.RunID, Epoch: tick.Epoch})
	})
	if err != nil {
		return runs.CreateResult{}, translate(fmt.Sprintf("create the tick %s of schedule %s", instant.Format(time.RFC3339), tick.ScheduleID), err)
	}
	if res.Created {
		rec.Status = res.Status
	}
	return res, nil
}

// scheduleBusy reports whether the schedule has queued or active runs of its pipeline key
// (tenant, name): overlap is judged per schedule, so a sibling schedule of the same
// template never makes a tick skip. A schedule's runs are those whose run key carries its
// prefix; the pipeline index narrows the scan to the key's few active runs first.
func (s *Store) scheduleBusy(ctx context.Context, tx bun.Tx, tenant, name, scheduleID string) (bool, error) {
	prefix := schedule.RunKeyPrefix(scheduleID)
	var n int
	if err := tx.NewRaw(`SELECT count(*) FROM sluice_runs WHERE tenant = ? AND name = ?
  AND status IN ('queued', 'pending', 'running', 'sharded') AND substr(run_key, 1, ?) = ?`,
		tenant, name, len(prefix), prefix).Scan(ctx, &n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// RecordTick records a tick without a run; see scheduling.Store.
func (s *Store) RecordTick(ctx context.Context, t scheduling.Tick) (bool, error) {
	t.Instant = t.Instant.UTC()
	inserted := false
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := s.checkTerm(ctx, tx, t.Epoch); err != nil {
			return err
		}
		if _, ok, err := s.existingTick(ctx, tx, t.ScheduleID, t.Instant); err != nil || ok {
			return err
		}
		inserted = true
		return s.insertTick(ctx, tx, t)
	})
	if err != nil {
		return false, translate(fmt.Sprintf("record the tick %s of schedule %s", t.Instant.Format(time.RFC3339), t.ScheduleID), err)
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

func (s *Store) insertTick(ctx context.Context, tx bun.Tx, t scheduling.Tick) error {
	_, err := tx.NewRaw(s.q(`INSERT INTO sluice_schedule_ticks (schedule_id, instant, status, reason, run_id,
  summary_count, summary_first, epoch, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, {now})`),
		t.ScheduleID, t.Instant.UTC().UnixMilli(), string(t.Status), nullIfEmpty(t.Reason), nullIfEmpty(t.RunID),
		nullIfZero(t.SummaryCount), msOrNull(t.SummaryFirst), t.Epoch).Exec(ctx)
	return err
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
