package suites

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/adapters/connectors/builtin"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/application/templates"
)

// The in-process stack under the schedules suite: one history, the runs funnel, the
// templates and the scheduler, wired the way `sluice serve` wires them, with the tick
// submissions timed as they return.

var schedAdmin = runs.Principal{Name: "bench", Role: runs.Admin}

// schedClock is the scheduler's injected clock; nil t means the real time.
type schedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *schedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t.IsZero() {
		return time.Now()
	}
	return c.t
}

func (c *schedClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// benchEnv resolves no ${env:} or ${file:} directive: the bench templates use none.
type benchEnv struct{}

func (benchEnv) LookupEnv(string) (string, bool) { return "", false }
func (benchEnv) ReadFile(p string) ([]byte, error) {
	return nil, errors.New("the schedules bench reads no files: " + p)
}

// tickDone is one tick's run as the scheduler's submission returned it.
type tickDone struct {
	Instant time.Time
	Done    time.Time // wall time when the run and its tick had committed
	RunID   string
	Status  string
	Skipped string
}

// timedTemplates is the scheduler's template port, noting when each tick's run came back.
type timedTemplates struct {
	*templates.Service
	mu    sync.Mutex
	done  []tickDone
	ended chan<- string // nil, or where the run ids go to be cancelled
}

func (t *timedTemplates) Run(ctx context.Context, p runs.Principal, id string, req templates.RunRequest) (runs.SubmitResult, error) {
	res, err := t.Service.Run(ctx, p, id, req)
	if err != nil || req.Tick == nil {
		return res, err
	}
	t.note(req.Tick.Instant, time.Now(), res)
	return res, nil
}

// note records one tick's run as it came back at `at`.
func (t *timedTemplates) note(instant, at time.Time, res runs.SubmitResult) {
	t.mu.Lock()
	t.done = append(t.done, tickDone{Instant: instant, Done: at, RunID: res.RunID, Status: res.Status, Skipped: res.Skipped})
	t.mu.Unlock()
	if t.ended != nil && res.RunID != "" {
		t.ended <- res.RunID
	}
}

// timedTicks is the scheduler's batch door to the funnel, noting every tick of a batch
// when the batch's transaction came back.
type timedTicks struct {
	runs  *runs.Service
	timed *timedTemplates
}

func (t *timedTicks) SubmitTicks(ctx context.Context, reqs []runs.SubmitRequest) ([]runs.SubmitResult, []error, error) {
	res, errs, err := t.runs.SubmitTicks(ctx, reqs)
	if err != nil {
		return res, errs, err
	}
	at := time.Now()
	for i, req := range reqs {
		if errs[i] == nil {
			t.timed.note(req.Tick.Instant, at, res[i])
		}
	}
	return res, errs, nil
}

// take returns the ticks noted since the last take.
func (t *timedTemplates) take() []tickDone {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.done
	t.done = nil
	return out
}

type schedWorld struct {
	st    *store.Store
	runs  *runs.Service
	tpl   *templates.Service
	timed *timedTemplates
	svc   *scheduling.Service
	clock *schedClock
	close func()
}

// schedHistory is one history the suite measures on.
type schedHistory struct {
	Label string // "SQLite" or "PostgreSQL"
	Kind  string // "sqlite" or "postgres"
}

// schedHistories are the histories the schedule suites measure on: SQLite, and
// PostgreSQL when a URL is set (pgBase; else pgErr says why not).
func schedHistories() (histories []schedHistory, pgBase string, pgErr error) {
	pgBase, pgErr = lookupURL(EnvBenchPostgres, envTestPostgres)
	histories = []schedHistory{{Label: "SQLite", Kind: "sqlite"}}
	if pgErr == nil {
		histories = append(histories, schedHistory{Label: "PostgreSQL", Kind: "postgres"})
	}
	return histories, pgBase, pgErr
}

// newSchedWorld opens a fresh history of kind (a new SQLite file in the run's directory,
// or a new PostgreSQL schema of pgBase) and the stack over it, creating due ticks in
// batches as serve does (perTick: one tick per transaction, the path before batches).
func newSchedWorld(ctx context.Context, dir, kind, name, pgBase string, ended chan<- string, perTick bool) (*schedWorld, error) {
	url, drop := "sqlite:"+filepath.Join(dir, name+".db"), func() {}
	if kind == "postgres" {
		var err error
		if url, drop, err = serveSchema(ctx, pgBase); err != nil {
			return nil, err
		}
	}
	st, err := store.Open(ctx, url, store.Options{})
	if err != nil {
		drop()
		return nil, fmt.Errorf("open the %s history: %w", kind, err)
	}
	closeAll := func() { _ = st.Close(); drop() }
	if err := st.Migrate(ctx); err != nil {
		closeAll()
		return nil, fmt.Errorf("migrate the %s history: %w", kind, err)
	}
	loader := &execute.Loader{Decoder: configtext.Decoder{}, Env: benchEnv{}, Catalog: builtin.Registry()}
	rs := runs.New(runs.Deps{Store: st, Loader: loader}, runs.Config{})
	tpl := templates.New(templates.Deps{Store: st, Runs: rs, Loader: loader})
	timed := &timedTemplates{Service: tpl, ended: ended}
	clk := &schedClock{}
	// As serve wires it: several schedules at once per pass on PostgreSQL, one on SQLite.
	workers := 1
	if kind == "postgres" {
		workers = 8
	}
	deps := scheduling.Deps{Store: st, Templates: timed, Runs: rs, Clock: clk.Now}
	if !perTick {
		deps.Ticks = &timedTicks{runs: rs, timed: timed}
	}
	svc := scheduling.New(deps, scheduling.Config{PassWorkers: workers})
	return &schedWorld{st: st, runs: rs, tpl: tpl, timed: timed, svc: svc, clock: clk, close: closeAll}, nil
}

// schedules registers n templates (each its own pipeline, so overlap never links them)
// and one per-minute schedule on each.
func (w *schedWorld) schedules(ctx context.Context, n int) error {
	for i := range n {
		id := fmt.Sprintf("tick-%03d", i)
		if _, err := w.tpl.Register(ctx, schedAdmin, templates.RegisterRequest{ID: id, Config: []byte(quickRun(id))}); err != nil {
			return fmt.Errorf("register template %s: %w", id, err)
		}
		if _, err := w.svc.Create(ctx, schedAdmin, scheduling.CreateRequest{TemplateID: id, Cron: "* * * * *"}); err != nil {
			return fmt.Errorf("schedule template %s: %w", id, err)
		}
	}
	return nil
}

// cancel ends the pending runs of ticks, so the next tick of their schedules finds no
// active work (overlap skip) and creates a run again. Nothing executes in the suite.
func (w *schedWorld) cancel(ctx context.Context, ids ...string) error {
	for _, id := range ids {
		if _, _, err := w.runs.Cancel(ctx, schedAdmin, id); err != nil {
			return fmt.Errorf("cancel run %s: %w", id, err)
		}
	}
	return nil
}

// lead takes the scheduler term of the history and returns its epoch.
func (w *schedWorld) lead(ctx context.Context) (int64, error) {
	lease, err := w.st.Elector(false).Campaign(ctx, schedCandidate())
	if err != nil {
		return 0, fmt.Errorf("take the scheduler term: %w", err)
	}
	return lease.Epoch(), nil
}

func schedCandidate() scheduling.Candidate {
	return scheduling.Candidate{InstanceID: "bench", Host: "bench", PID: 1, Version: "bench", TTL: time.Minute}
}
