package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

var _ scheduling.Store = (*Store)(nil)

type scheduleRow struct {
	ID             string         `bun:"id"`
	TemplateID     string         `bun:"template_id"`
	Cron           string         `bun:"cron"`
	Timezone       string         `bun:"timezone"`
	StartDate      sql.NullString `bun:"start_date"`
	Catchup        bool           `bun:"catchup"`
	MaxCatchupRuns int            `bun:"max_catchup_runs"`
	Overlap        string         `bun:"overlap_policy"`
	Params         string         `bun:"params"`
	ParamsSealed   bool           `bun:"params_sealed"`
	Pool           sql.NullString `bun:"pool"`
	Labels         string         `bun:"labels"`
	Paused         bool           `bun:"paused"`
	CreatedBy      string         `bun:"created_by"`
	CreatedAt      int64          `bun:"created_at"`
	UpdatedAt      int64          `bun:"updated_at"`
	LastTick       sql.NullInt64  `bun:"last_tick"`
}

// scheduleSelect reads schedules with the instant of their newest tick (the primary
// key's index answers it).
const scheduleSelect = `SELECT s.id, s.template_id, s.cron, s.timezone, s.start_date, s.catchup,
  s.max_catchup_runs, s.overlap_policy, s.params, s.params_sealed, s.pool, s.labels, s.paused,
  s.created_by, s.created_at, s.updated_at,
  (SELECT max(t.instant) FROM sluice_schedule_ticks t WHERE t.schedule_id = s.id) AS last_tick
FROM sluice_schedules s`

func (r scheduleRow) schedule() (*scheduling.Schedule, error) {
	sc := &scheduling.Schedule{
		ID: r.ID, TemplateID: r.TemplateID, Cron: r.Cron, Timezone: r.Timezone, StartDate: r.StartDate.String,
		Catchup: r.Catchup, MaxCatchupRuns: r.MaxCatchupRuns, Overlap: schedule.OverlapPolicy(r.Overlap),
		Params: r.Params, ParamsSealed: r.ParamsSealed, Pool: r.Pool.String, Paused: r.Paused,
		CreatedBy: r.CreatedBy, CreatedAt: fromMS(r.CreatedAt), UpdatedAt: fromMS(r.UpdatedAt),
	}
	if r.LastTick.Valid {
		sc.LastTick = fromMS(r.LastTick.Int64)
	}
	if err := json.Unmarshal([]byte(r.Labels), &sc.Labels); err != nil {
		return nil, fmt.Errorf("schedule %s: stored labels are not a JSON object: %w", r.ID, err)
	}
	return sc, nil
}

// AddSchedule stores sc; see scheduling.Store. It takes the template's lock, as
// DeleteTemplate does, so a template is never deleted under a new schedule.
func (s *Store) AddSchedule(ctx context.Context, sc *scheduling.Schedule) error {
	labels := "{}"
	if len(sc.Labels) > 0 {
		b, err := json.Marshal(sc.Labels)
		if err != nil {
			return fmt.Errorf("labels: %w", err)
		}
		labels = string(b)
	}
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := s.lockPipeline(ctx, tx, "template", sc.TemplateID); err != nil {
			return err
		}
		var n int
		if err := tx.NewRaw("SELECT count(*) FROM sluice_templates WHERE id = ?", sc.TemplateID).Scan(ctx, &n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("template %s: %w", sc.TemplateID, run.ErrNotFound)
		}
		_, err := tx.NewRaw(`INSERT INTO sluice_schedules (id, template_id, cron, timezone, start_date, catchup,
  max_catchup_runs, overlap_policy, params, params_sealed, pool, labels, paused, created_by, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sc.ID, sc.TemplateID, sc.Cron, sc.Timezone, nullIfEmpty(sc.StartDate), sc.Catchup, sc.MaxCatchupRuns,
			string(sc.Overlap), sc.Params, sc.ParamsSealed, nullIfEmpty(sc.Pool), labels, sc.Paused, sc.CreatedBy,
			sc.CreatedAt.UnixMilli(), sc.UpdatedAt.UnixMilli()).Exec(ctx)
		if err != nil {
			return err
		}
		return s.notifySchedules(ctx, tx)
	})
	return translate("add schedule "+sc.ID, err)
}

// GetSchedule returns one schedule; run.ErrNotFound when missing.
func (s *Store) GetSchedule(ctx context.Context, id string) (*scheduling.Schedule, error) {
	return s.getSchedule(ctx, s.db, id)
}

func (s *Store) getSchedule(ctx context.Context, db bun.IDB, id string) (*scheduling.Schedule, error) {
	var r scheduleRow
	err := db.NewRaw(scheduleSelect+" WHERE s.id = ?", id).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("schedule %s: %w", id, run.ErrNotFound)
	}
	if err != nil {
		return nil, translate("read schedule "+id, err)
	}
	return r.schedule()
}

// ListSchedules returns every schedule, oldest first.
func (s *Store) ListSchedules(ctx context.Context) ([]*scheduling.Schedule, error) {
	var rows []scheduleRow
	if err := s.db.NewRaw(scheduleSelect+" ORDER BY s.created_at, s.id").Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("list schedules", err)
	}
	out := make([]*scheduling.Schedule, 0, len(rows))
	for _, r := range rows {
		sc, err := r.schedule()
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// SetPaused sets a schedule's paused flag; run.ErrNotFound when missing.
// The change is announced to the leader, which keeps a copy of the schedules.
func (s *Store) SetPaused(ctx context.Context, id string, paused bool, at time.Time) (*scheduling.Schedule, error) {
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw("UPDATE sluice_schedules SET paused = ?, updated_at = ? WHERE id = ?", paused, at.UnixMilli(), id).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("schedule %s: %w", id, run.ErrNotFound)
		}
		// Announced either way: the leader keeps a copy of the schedules (a resume also
		// wakes it).
		return s.notifySchedules(ctx, tx)
	})
	if err != nil {
		return nil, translate("pause schedule "+id, err)
	}
	return s.GetSchedule(ctx, id)
}

// DeleteSchedule removes a schedule and its ticks; run.ErrNotFound when missing.
func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw("DELETE FROM sluice_schedule_ticks WHERE schedule_id = ?", id).Exec(ctx); err != nil {
			return err
		}
		res, err := tx.NewRaw("DELETE FROM sluice_schedules WHERE id = ?", id).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("schedule %s: %w", id, run.ErrNotFound)
		}
		return s.notifySchedules(ctx, tx)
	})
	return translate("delete schedule "+id, err)
}

// SchedulesStamp is the count of schedules and their newest update; see scheduling.Store.
// Adding one raises the count, deleting one lowers it, pausing or resuming sets
// updated_at.
func (s *Store) SchedulesStamp(ctx context.Context) (string, error) {
	var st struct {
		N    int64 `bun:"n"`
		Last int64 `bun:"last"`
	}
	if err := s.db.NewRaw("SELECT count(*) AS n, COALESCE(max(updated_at), 0) AS last FROM sluice_schedules").Scan(ctx, &st); err != nil {
		return "", translate("read the schedules' stamp", err)
	}
	return fmt.Sprintf("%d:%d", st.N, st.Last), nil
}
