package suites

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/tests/bench/harness"
)

// Sizes of the schedules-scale suite.
const (
	scaleMaxSchedules  = 100_000 // --rows above it is capped
	scaleBaselineCap   = 10_000  // the per-tick path is measured on at most this many
	scalePerTemplate   = 100     // schedules per template (per pipeline key)
	scaleInsertChunk   = 1_000
	scaleMaxQueuedNote = 10_000 // serve's --max-queued-runs default
)

// SchedulesScale measures a burst of many schedules due at one instant: the time from
// the instant until every tick is recorded, with ticks created in batches (as serve
// does) beside the path before them (one transaction per tick).
func SchedulesScale() harness.Suite {
	return harness.Suite{
		Name: "schedules-scale",
		Description: "the scheduler in process: --rows schedules (at most 100,000) all due at one instant; time until every " +
			"tick is recorded and ticks/s, batched beside one transaction per tick (on at most 10,000), on SQLite and " +
			"PostgreSQL (the PostgreSQL rows need a PostgreSQL URL)",
		Table: measureSchedulesScale,
	}
}

func measureSchedulesScale(ctx context.Context, env *harness.Env) (harness.Table, error) {
	n := int(min(max(env.Rows, 1), scaleMaxSchedules))
	histories, pgBase, pgErr := schedHistories()
	var rows [][]string
	for _, h := range histories {
		for _, perTick := range []bool{true, false} {
			size := n
			if perTick {
				size = min(n, scaleBaselineCap)
			}
			row, err := measureScale(ctx, env, h, pgBase, size, perTick)
			if err != nil {
				return harness.Table{}, fmt.Errorf("%s: %w", h.Label, err)
			}
			rows = append(rows, row)
		}
	}
	if pgErr != nil {
		rows = append(rows, []string{"—", "PostgreSQL", "—", "—", "—", "not measured: " + pgErr.Error()})
	}
	env.Note("In process, as schedules: the history (a fresh SQLite file or PostgreSQL schema), the runs funnel, templates and the scheduler wired as `sluice serve` wires them (8 batches or schedules at once on PostgreSQL, 1 on SQLite); no member executes runs. %d schedules per template (each template its own pipeline), every one `* * * * *` with overlap skip, loaded by SQL; then one pass (`Service.Pass`) at the instant they are all due.", scalePerTemplate)
	env.Note("seconds = from the pass's start (the instant) until it returned with every tick recorded (one pending run per tick, checked); ticks/s = ticks / seconds. The per-tick path (one transaction per tick, as before batches) is measured on at most %d schedules.", scaleBaselineCap)
	env.Note("No queue limit is set here. `sluice serve` refuses runs beyond --max-queued-runs (default %d pending + queued): a larger burst records its surplus ticks skipped (run refused: queue full), so raise the flag above the number of schedules due at once.", scaleMaxQueuedNote)
	return harness.Table{
		Columns: []string{"path", "history", "ticks", "seconds", "ticks/s", "note"},
		Rows:    rows,
	}, nil
}

// measureScale loads n schedules on a fresh history and times one pass over them.
func measureScale(ctx context.Context, env *harness.Env, h schedHistory, pgBase string, n int, perTick bool) ([]string, error) {
	path := "batched (≤ 250 ticks per transaction)"
	name := "schedules-scale"
	if perTick {
		path, name = "one transaction per tick", "schedules-scale-pertick"
	}
	w, err := newSchedWorld(ctx, env.Dir, h.Kind, name, pgBase, nil, perTick)
	if err != nil {
		return nil, err
	}
	defer w.close()
	env.Progress("schedules-scale %s, %s: loading %d schedules", h.Kind, path, n)
	base := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour)
	if err := w.scaleSchedules(ctx, n, base); err != nil {
		return nil, err
	}
	epoch, err := w.lead(ctx)
	if err != nil {
		return nil, err
	}
	instant := base.Add(time.Minute)
	w.clock.set(instant.Add(time.Second))
	start := time.Now()
	if _, err := w.svc.Pass(ctx, epoch); err != nil {
		return nil, fmt.Errorf("pass: %w", err)
	}
	took := time.Since(start)
	if _, err := pendingTicks(w.timed.take(), n, instant); err != nil {
		return nil, err
	}
	perSec := float64(n) / took.Seconds()
	env.Progress("schedules-scale %s, %s: %d ticks in %.1f s, %.0f ticks/s", h.Kind, path, n, took.Seconds(), perSec)
	return []string{path, h.Label, harness.Thousands(int64(n)), fmt.Sprintf("%.1f", took.Seconds()),
		harness.Thousands(int64(perSec + 0.5)), fmt.Sprintf("%d schedules due at once", n)}, nil
}

// scaleSchedules registers n/scalePerTemplate templates and inserts n per-minute
// schedules on them by SQL, created at `created` (their first tick is the minute after).
func (w *schedWorld) scaleSchedules(ctx context.Context, n int, created time.Time) error {
	tpls := max(n/scalePerTemplate, 1)
	for i := range tpls {
		id := fmt.Sprintf("scale-%05d", i)
		if _, err := w.tpl.Register(ctx, schedAdmin, templates.RegisterRequest{ID: id, Config: []byte(quickRun(id))}); err != nil {
			return fmt.Errorf("register template %s: %w", id, err)
		}
	}
	ms := created.UnixMilli()
	for from := 0; from < n; from += scaleInsertChunk {
		to := min(from+scaleInsertChunk, n)
		vals := make([]string, 0, to-from)
		args := make([]any, 0, 4*(to-from))
		for i := from; i < to; i++ {
			vals = append(vals, "(?, ?, '* * * * *', 'UTC', NULL, ?, 1, 'skip', '{}', ?, NULL, '{}', ?, 'bench', ?, ?)")
			args = append(args, fmt.Sprintf("sched-%06d", i), fmt.Sprintf("scale-%05d", i%tpls), false, false, false, ms, ms)
		}
		err := w.st.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO sluice_schedules (id, template_id, cron, timezone, start_date, catchup,
  max_catchup_runs, overlap_policy, params, params_sealed, pool, labels, paused, created_by, created_at, updated_at)
VALUES `+strings.Join(vals, ", "), args...)
			return err
		})
		if err != nil {
			return fmt.Errorf("insert schedules %d..%d: %w", from, to, err)
		}
	}
	return nil
}
