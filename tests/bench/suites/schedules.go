package suites

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/tests/bench/harness"
)

// Sizes of the schedules suite, fixed like the other latency suites'.
const (
	burstSchedules = 100
	burstMinutes   = 10 // burstSchedules × burstMinutes ticks
	realSchedules  = 5
	realBoundaries = 3 // minute boundaries waited for: the real-clock part takes ≤ 3 min
	realSlack      = 15 * time.Second
	// targetLateness is SPEC §9.3's promise read as a bound: a tick's run is pending
	// within a second of its instant.
	targetLateness = time.Second
)

// Schedules measures the scheduler in process: how fast a pass turns due ticks into
// pending runs with an injected clock, and, on the real clock, how late each tick's run
// becomes pending after its instant.
func Schedules() harness.Suite {
	return harness.Suite{
		Name: "schedules",
		Description: "the scheduler in process: tick creation throughput and latency of 1,000 ticks (injected clock), " +
			"and each tick's lateness on the real clock over 3 minute boundaries, on SQLite and PostgreSQL " +
			"(the PostgreSQL rows need a PostgreSQL URL); takes about 3 minutes",
		Table: measureSchedules,
	}
}

func measureSchedules(ctx context.Context, env *harness.Env) (harness.Table, error) {
	histories, pgBase, pgErr := schedHistories()
	var rows [][]string
	for _, h := range histories {
		env.Progress("schedules %s: %d ticks of %d schedules, injected clock", h.Kind, burstSchedules*burstMinutes, burstSchedules)
		row, err := measureBurst(ctx, env, h, pgBase)
		if err != nil {
			return harness.Table{}, fmt.Errorf("%s burst: %w", h.Label, err)
		}
		rows = append(rows, row)
	}
	env.Progress("schedules: real clock, %d schedules per history over %d minute boundaries", realSchedules, realBoundaries)
	real, err := measureRealClock(ctx, env, histories, pgBase)
	if err != nil {
		return harness.Table{}, fmt.Errorf("real clock: %w", err)
	}
	rows = append(rows, real...)
	if pgErr != nil {
		rows = append(rows, []string{"—", "PostgreSQL", "—", "—", "—", "—", "—", "not measured: " + pgErr.Error()})
	}
	env.Note("In process: the history (a fresh SQLite file, or a fresh PostgreSQL schema via search_path), the runs funnel, templates and the scheduler wired as `sluice serve` wires them; no member executes runs. Each schedule is `* * * * *` with overlap skip on a template of its own (generate 1 row → stdout).")
	env.Note("Burst: %d schedules; the injected clock is set to each of %d minute instants in turn and one pass (`Service.Pass`) creates the %d due ticks in batches, as serve does (up to 250 ticks per transaction; each tick keeps its own overlap decision and epoch fence; `--suite schedules-scale` compares with one transaction per tick). ticks/s = ticks / total pass time; latency = when the tick's run had committed pending − when the clock reached its instant (wall time). The runs are cancelled between minutes, outside the timing, so the next tick is not skipped.",
		burstSchedules, burstMinutes, burstSchedules)
	env.Note("Real clock: the leader loop (`scheduling.Leader`, 1 s poll, sleeping until the next due instant) on its own history, %d schedules, %d minute boundaries, both histories at once; lateness = when the tick's run had committed pending − the tick's instant. Target (SPEC §9.3): pending within %s.",
		realSchedules, realBoundaries, targetLateness)
	return harness.Table{
		Columns: []string{"measure", "history", "ticks", "ticks/s", "p50", "p95", "max", "note"},
		Rows:    rows,
	}, nil
}

// measureBurst creates burstSchedules × burstMinutes ticks with an injected clock.
func measureBurst(ctx context.Context, env *harness.Env, h schedHistory, pgBase string) ([]string, error) {
	w, err := newSchedWorld(ctx, env.Dir, h.Kind, "schedules-burst", pgBase, nil, false)
	if err != nil {
		return nil, err
	}
	defer w.close()
	base := time.Now().UTC().Truncate(time.Minute).Add(30 * time.Second)
	w.clock.set(base)
	if err := w.schedules(ctx, burstSchedules); err != nil {
		return nil, err
	}
	epoch, err := w.lead(ctx)
	if err != nil {
		return nil, err
	}
	var lat []time.Duration
	var passes time.Duration
	for m := 1; m <= burstMinutes; m++ {
		instant := base.Truncate(time.Minute).Add(time.Duration(m) * time.Minute)
		w.clock.set(instant)
		start := time.Now()
		if _, err := w.svc.Pass(ctx, epoch); err != nil {
			return nil, fmt.Errorf("pass at %s: %w", instant.Format(time.RFC3339), err)
		}
		passes += time.Since(start)
		done := w.timed.take()
		ids, err := pendingTicks(done, burstSchedules, instant)
		if err != nil {
			return nil, err
		}
		for _, d := range done {
			lat = append(lat, d.Done.Sub(start))
		}
		if err := w.cancel(ctx, ids...); err != nil {
			return nil, err
		}
	}
	n := len(lat)
	perSec := float64(n) / passes.Seconds()
	env.Progress("schedules %s: %.0f ticks/s, latency p50 %s", h.Kind, perSec, serveMS(servePercentile(lat, 50)))
	return []string{
		fmt.Sprintf("burst: %d schedules × %d minutes (injected clock)", burstSchedules, burstMinutes), h.Label,
		harness.Thousands(int64(n)), harness.Thousands(int64(perSec + 0.5)),
		serveMS(servePercentile(lat, 50)), serveMS(servePercentile(lat, 95)), serveMS(servePercentile(lat, 100)),
		fmt.Sprintf("%s per pass of %d due ticks", serveMS(passes/burstMinutes), burstSchedules),
	}, nil
}

// pendingTicks checks that a pass created want pending runs, all of instant, and
// returns their ids.
func pendingTicks(done []tickDone, want int, instant time.Time) ([]string, error) {
	if len(done) != want {
		return nil, fmt.Errorf("the pass at %s submitted %d ticks, want %d", instant.Format(time.RFC3339), len(done), want)
	}
	ids := make([]string, 0, len(done))
	for _, d := range done {
		switch {
		case d.Skipped != "":
			return nil, fmt.Errorf("the tick at %s was skipped: %s", d.Instant.Format(time.RFC3339), d.Skipped)
		case d.Status != string(run.Pending):
			return nil, fmt.Errorf("the tick at %s made a %s run, want pending", d.Instant.Format(time.RFC3339), d.Status)
		case !d.Instant.Equal(instant):
			return nil, fmt.Errorf("a tick at %s in the pass at %s", d.Instant.Format(time.RFC3339), instant.Format(time.RFC3339))
		}
		ids = append(ids, d.RunID)
	}
	return ids, nil
}

// measureRealClock runs the leader loop on every history at once over realBoundaries
// minute boundaries and reports each tick's lateness.
func measureRealClock(ctx context.Context, env *harness.Env, histories []schedHistory, pgBase string) ([][]string, error) {
	rows := make([][]string, len(histories))
	errs := make([]error, len(histories))
	var wg sync.WaitGroup
	for i, h := range histories {
		wg.Go(func() {
			rows[i], errs[i] = realClockRow(ctx, env, h, pgBase)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", histories[i].Label, err)
		}
	}
	return rows, nil
}

func realClockRow(ctx context.Context, env *harness.Env, h schedHistory, pgBase string) ([]string, error) {
	ended := make(chan string, realSchedules*realBoundaries)
	w, err := newSchedWorld(ctx, env.Dir, h.Kind, "schedules-real", pgBase, ended, false)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if err := w.schedules(ctx, realSchedules); err != nil {
		return nil, err
	}
	first := time.Now().Truncate(time.Minute).Add(time.Minute)
	last := first.Add((realBoundaries - 1) * time.Minute)
	leader := scheduling.NewLeader(w.svc, w.st.Elector(false), scheduling.LeaderConfig{Candidate: schedCandidate()})
	leader.Start()
	defer leader.Stop()
	// A tick's run is cancelled once it came back, so the next minute's tick of its
	// schedule finds no active work.
	deadline := time.NewTimer(time.Until(last) + realSlack)
	defer deadline.Stop()
	var lateness []time.Duration
	want := realSchedules * realBoundaries
	for len(lateness) < want {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return nil, fmt.Errorf("%d of %d ticks came by %s", len(lateness), want, last.Add(realSlack).Format(time.TimeOnly))
		case id := <-ended:
			if err := w.cancel(ctx, id); err != nil {
				return nil, err
			}
			for _, d := range w.timed.take() {
				if d.Status != string(run.Pending) {
					return nil, fmt.Errorf("the tick at %s made a %q run (skipped: %q), want pending",
						d.Instant.Format(time.RFC3339), d.Status, d.Skipped)
				}
				lateness = append(lateness, d.Done.Sub(d.Instant))
			}
		}
	}
	over := 0
	for _, l := range lateness {
		if l > targetLateness {
			over++
		}
	}
	env.Progress("schedules %s real clock: lateness p50 %s, max %s", h.Kind,
		serveMS(servePercentile(lateness, 50)), serveMS(servePercentile(lateness, 100)))
	return []string{
		fmt.Sprintf("real clock: %d schedules × %d minute boundaries", realSchedules, realBoundaries), h.Label,
		strconv.Itoa(len(lateness)), "—",
		serveMS(servePercentile(lateness, 50)), serveMS(servePercentile(lateness, 95)), serveMS(servePercentile(lateness, 100)),
		fmt.Sprintf("%d of %d later than the %s target", over, len(lateness), targetLateness),
	}, nil
}
