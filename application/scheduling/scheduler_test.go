package scheduling_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/adapters/connectors/builtin"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
	"github.com/sluicehq/sluice/tests/testdb"
)

var admin = runs.Principal{Name: "ann", Role: runs.Admin}

// clock is the injected time of a scheduler test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time)     { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type noEnv struct{}

func (noEnv) LookupEnv(string) (string, bool)   { return "", false }
func (noEnv) ReadFile(p string) ([]byte, error) { return nil, errors.New("no files here: " + p) }

// world is the real stack under a schedule: history, runs funnel, templates, schedules.
type world struct {
	st    *store.Store
	svc   *scheduling.Service
	tpl   *templates.Service
	clock *clock
	dir   string
	epoch int64
	ctx   context.Context
	load  *execute.Loader
	rs    *runs.Service
}

func newWorld(t *testing.T, url string, sealer ...runs.Sealer) *world {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, url, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(ctx))
	clk := &clock{}
	loader := &execute.Loader{Decoder: configtext.Decoder{}, Env: noEnv{}, Catalog: builtin.Registry()}
	var seal runs.Sealer
	if len(sealer) > 0 {
		seal = sealer[0]
	}
	rs := runs.New(runs.Deps{Store: st, Loader: loader, Clock: clk, Sealer: seal}, runs.Config{MaxQueued: 100000})
	tpl := templates.New(templates.Deps{Store: st, Runs: rs, Loader: loader, Clock: clk.Now, Sealer: seal})
	svc := scheduling.New(scheduling.Deps{Store: st, Templates: tpl, Runs: rs, Ticks: rs, Clock: clk.Now, Sealer: seal, Audit: st}, scheduling.Config{})
	lease, err := st.Elector(false).Campaign(ctx, scheduling.Candidate{InstanceID: "test", Host: "h", PID: 1, Version: "t", TTL: time.Minute})
	require.NoError(t, err)
	return &world{st: st, svc: svc, tpl: tpl, clock: clk, dir: t.TempDir(), epoch: lease.Epoch(), ctx: ctx, load: loader, rs: rs}
}

// schedule registers a template of its own pipeline key and a schedule on it.
func (w *world) schedule(t *testing.T, name string, req scheduling.CreateRequest) string {
	t.Helper()
	w.template(t, name, "")
	req.TemplateID = name
	v, err := w.svc.Create(w.ctx, admin, req)
	require.NoError(t, err)
	return v.ID
}

// template registers a template of pipeline name with a params block.
func (w *world) template(t *testing.T, name, params string) {
	t.Helper()
	// A template with a region param writes a table per region, so a run's config shows
	// which params it was made with.
	table := "rows"
	if strings.Contains(params, "region:") {
		table = `"region_${param.region}"`
	}
	cfg := fmt.Sprintf(`version: 1
name: %s
%spipeline:
  source: { type: generate, config: { count: 1 } }
  sink: { type: sqlite, config: { connection_url: "sqlite:%s", table_name: %s, write_mode: append, create_table: true } }
`, name, params, filepath.Join(w.dir, name+".db"), table)
	_, err := w.tpl.Register(w.ctx, admin, templates.RegisterRequest{ID: name, Config: []byte(cfg)})
	require.NoError(t, err)
}

// walk runs a pass every step from the clock's time until `until`.
func (w *world) walk(t *testing.T, until time.Time, step time.Duration) {
	t.Helper()
	for ; !w.clock.Now().After(until); w.clock.add(step) {
		_, err := w.svc.Pass(w.ctx, w.epoch)
		require.NoError(t, err)
	}
	w.clock.set(until)
}

type tickLine struct {
	at     string // RFC 3339 UTC
	status schedule.Outcome
	reason string
}

// ticks lists a schedule's ticks oldest first.
func (w *world) ticks(t *testing.T, id string) []tickLine {
	t.Helper()
	list, err := w.st.ListTicks(w.ctx, id, time.Time{}, 1000)
	require.NoError(t, err)
	out := make([]tickLine, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		tk := list[i]
		require.Equal(t, tk.Status == schedule.OutcomeSkipped, tk.RunID == "", "only skipped ticks lack a run")
		out = append(out, tickLine{tk.Instant.UTC().Format(time.RFC3339), tk.Status, tk.Reason})
	}
	return out
}

func backends(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "history.db") },
		"postgres": func(t *testing.T) string { return testdb.Postgres(t) },
	}
}

// Through the Berlin spring-forward weekend, then a three-day outage: every tick and every
// skip reason, with catch-up off and on (SPEC §9.1, §9.2).
func TestSchedulerThroughDSTAndAnOutage(t *testing.T) {
	t.Parallel()
	for name, url := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, url(t))
			w.clock.set(time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC)) // Friday; Sunday 02:00 CET → 03:00 CEST
			queue := "queue"
			nightly := w.schedule(t, "nightly", scheduling.CreateRequest{Cron: "30 2 * * *", Timezone: "Europe/Berlin", Overlap: queue})
			hourly := w.schedule(t, "hourly", scheduling.CreateRequest{Cron: "0 1-4 * * *", Timezone: "Europe/Berlin", Overlap: queue})
			three := 2
			catchup := w.schedule(t, "catchup", scheduling.CreateRequest{Cron: "0 */6 * * *", Timezone: "Europe/Berlin",
				Catchup: true, MaxCatchupRuns: &three, Overlap: queue})

			w.walk(t, time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC), 10*time.Minute)
			require.Equal(t, []tickLine{
				{"2026-03-28T01:30:00Z", "created", ""}, // 02:30 CET
				{"2026-03-29T01:00:00Z", "queued", ""},  // 02:30 does not exist: 03:00 CEST
				{"2026-03-30T00:30:00Z", "queued", ""},  // 02:30 CEST
			}, w.ticks(t, nightly))
			require.Equal(t, []tickLine{
				{"2026-03-28T00:00:00Z", "created", ""}, {"2026-03-28T01:00:00Z", "queued", ""},
				{"2026-03-28T02:00:00Z", "queued", ""}, {"2026-03-28T03:00:00Z", "queued", ""},
				// Sunday: 01:00 CET, then 02:00 (gap) and 03:00 both fire once at 03:00 CEST, 04:00 CEST.
				{"2026-03-29T00:00:00Z", "queued", ""}, {"2026-03-29T01:00:00Z", "queued", ""}, {"2026-03-29T02:00:00Z", "queued", ""},
				{"2026-03-29T23:00:00Z", "queued", ""}, {"2026-03-30T00:00:00Z", "queued", ""},
				{"2026-03-30T01:00:00Z", "queued", ""}, {"2026-03-30T02:00:00Z", "queued", ""},
			}, w.ticks(t, hourly))
			before := len(w.ticks(t, catchup))

			// Three days without a scheduler.
			w.clock.set(time.Date(2026, 4, 2, 12, 30, 0, 0, time.UTC))
			_, err := w.svc.Pass(w.ctx, w.epoch)
			require.NoError(t, err)
			missed := schedule.ReasonMissed
			require.Equal(t, []tickLine{
				{"2026-03-31T00:30:00Z", "skipped", missed},
				{"2026-04-01T00:30:00Z", "skipped", missed},
				{"2026-04-02T00:30:00Z", "queued", ""}, // without catch-up only the latest runs
			}, w.ticks(t, nightly)[3:])
			got := w.ticks(t, catchup)[before:]
			require.Len(t, got, 12, "every six hours for three days")
			for _, tk := range got[:10] {
				require.Equal(t, tickLine{tk.at, "skipped", missed}, tk)
			}
			require.Equal(t, []tickLine{{"2026-04-02T04:00:00Z", "queued", ""}, {"2026-04-02T10:00:00Z", "queued", ""}},
				got[10:], "catch-up creates the newest max_catchup_runs, oldest first")

			// Passes again at the same time change nothing.
			_, err = w.svc.Pass(w.ctx, w.epoch)
			require.NoError(t, err)
			require.Len(t, w.ticks(t, catchup)[before:], 12)
		})
	}
}

// Overlap skip, pause, an unserved pool and a deposed leader (SPEC §9.2, §5.4, §9.3).
func TestSchedulerSkipReasonsAndFencing(t *testing.T) {
	t.Parallel()
	for name, url := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, url(t))
			w.clock.set(time.Date(2026, 6, 1, 10, 0, 30, 0, time.UTC))
			skip := w.schedule(t, "busy", scheduling.CreateRequest{Cron: "*/10 * * * *"})
			paused := w.schedule(t, "paused", scheduling.CreateRequest{Cron: "*/10 * * * *"})
			unserved := w.schedule(t, "elsewhere", scheduling.CreateRequest{Cron: "*/10 * * * *", Pool: "gpu"})
			_, err := w.svc.Pause(w.ctx, admin, paused)
			require.NoError(t, err)

			w.walk(t, time.Date(2026, 6, 1, 10, 25, 0, 0, time.UTC), time.Minute)
			require.Equal(t, []tickLine{
				{"2026-06-01T10:10:00Z", "created", ""},
				{"2026-06-01T10:20:00Z", "skipped", schedule.ReasonOverlap}, // the first run never ran
			}, w.ticks(t, skip))
			require.Equal(t, []tickLine{
				{"2026-06-01T10:10:00Z", "skipped", schedule.ReasonPaused},
				{"2026-06-01T10:20:00Z", "skipped", schedule.ReasonPaused},
			}, w.ticks(t, paused))
			require.Equal(t, []tickLine{
				{"2026-06-01T10:10:00Z", "skipped", "pool unserved: gpu"},
				{"2026-06-01T10:20:00Z", "skipped", "pool unserved: gpu"},
			}, w.ticks(t, unserved))

			_, err = w.svc.Resume(w.ctx, admin, paused)
			require.NoError(t, err)
			w.walk(t, time.Date(2026, 6, 1, 10, 30, 0, 0, time.UTC), time.Minute)
			require.Equal(t, tickLine{"2026-06-01T10:30:00Z", "created", ""}, w.ticks(t, paused)[2], "resumed")

			// A new term deposes the old one: its passes write nothing.
			next, err := w.st.Elector(false).Campaign(w.ctx, scheduling.Candidate{InstanceID: "other", Host: "h", PID: 2, Version: "t", TTL: time.Minute})
			require.NoError(t, err)
			w.clock.set(time.Date(2026, 6, 1, 10, 40, 0, 0, time.UTC))
			_, err = w.svc.Pass(w.ctx, w.epoch)
			require.ErrorIs(t, err, run.ErrLeaseLost)
			require.Len(t, w.ticks(t, paused), 3)
			_, err = w.svc.Pass(w.ctx, next.Epoch())
			require.NoError(t, err)
			require.Len(t, w.ticks(t, paused), 4)
		})
	}
}

// Two schedules of one template, with different params and the same cron, tick into two
// runs per instant, each with its own params, whatever the overlap policy: overlap is
// judged per schedule (SPEC §9.2 amended), and a manual run of the pipeline does not
// count as either schedule's earlier run.
func TestSchedulesOfOneTemplateNeverCollapse(t *testing.T) {
	t.Parallel()
	for name, url := range backends(t) {
		for _, policy := range []string{"skip", "queue"} {
			t.Run(name+"/"+policy, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, url(t))
				w.clock.set(time.Date(2026, 6, 1, 10, 0, 30, 0, time.UTC))
				w.template(t, "regions", "params:\n  region: { type: string, required: true }\n")
				ids := map[string]string{}
				for _, region := range []string{"eu", "us"} {
					v, err := w.svc.Create(w.ctx, admin, scheduling.CreateRequest{TemplateID: "regions", Cron: "*/10 * * * *",
						Overlap: policy, Params: map[string]string{"region": region}})
					require.NoError(t, err)
					ids[region] = v.ID
				}
				manual, err := w.tpl.Run(w.ctx, admin, "regions", templates.RunRequest{Params: map[string]string{"region": "eu"}})
				require.NoError(t, err)

				w.walk(t, time.Date(2026, 6, 1, 10, 12, 0, 0, time.UTC), time.Minute)
				runIDs := map[string]bool{manual.RunID: true}
				for region, id := range ids {
					ticks, err := w.st.ListTicks(w.ctx, id, time.Time{}, 10)
					require.NoError(t, err)
					require.Len(t, ticks, 1, region)
					tk := ticks[0]
					require.Equal(t, "2026-06-01T10:10:00Z", tk.Instant.UTC().Format(time.RFC3339), region)
					require.NotEqual(t, schedule.OutcomeSkipped, tk.Status, "%s: %s", region, tk.Reason)
					require.NotEmpty(t, tk.RunID, region)
					require.False(t, runIDs[tk.RunID], "%s: the tick has a run of its own", region)
					runIDs[tk.RunID] = true
					rec, err := w.st.Get(w.ctx, tk.RunID)
					require.NoError(t, err)
					require.Equal(t, schedule.RunKey(id, tk.Instant), rec.RunKey, region)
					require.Contains(t, rec.Config, "region_"+region, "the run carries its schedule's params")
					require.NotContains(t, rec.Config, "region_"+map[string]string{"eu": "us", "us": "eu"}[region])
				}
				require.Len(t, runIDs, 3, "a manual run and one run per schedule")
			})
		}
	}
}
