package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/secret"
	"github.com/sluicehq/sluice/domain/state"
)

// fakeRunner runs a function per job and records the jobs.
type fakeRunner struct {
	fn      func(ctx context.Context, job execute.Job) (execute.Stats, error)
	mu      sync.Mutex
	jobs    []execute.Job
	active  int
	maxSeen int
	started atomic.Int64
}

func (r *fakeRunner) Run(ctx context.Context, job execute.Job) (execute.Stats, error) {
	r.mu.Lock()
	r.jobs = append(r.jobs, job)
	r.active++
	r.maxSeen = max(r.maxSeen, r.active)
	r.mu.Unlock()
	r.started.Add(1)
	defer func() {
		r.mu.Lock()
		r.active--
		r.mu.Unlock()
	}()
	return r.fn(ctx, job)
}

func (r *fakeRunner) job(i int) execute.Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.jobs[i]
}

// untilCancelled reports rows written, then blocks until the token fires, like an
// executor stopping at a page boundary.
func untilCancelled(rows int64) func(ctx context.Context, job execute.Job) (execute.Stats, error) {
	return func(ctx context.Context, job execute.Job) (execute.Stats, error) {
		s := execute.Stats{RowsRead: rows, RowsWritten: rows, Pages: 1, Elapsed: 5 * time.Millisecond}
		if job.Progress != nil {
			job.Progress(s)
		}
		<-ctx.Done()
		return s, fmt.Errorf("cancelled after 1 confirmed pages: %w", ctx.Err())
	}
}

func succeed(rows int64) func(ctx context.Context, job execute.Job) (execute.Stats, error) {
	return func(context.Context, execute.Job) (execute.Stats, error) {
		return execute.Stats{RowsRead: rows, RowsWritten: rows, Pages: 1}, nil
	}
}

// fakeLoader builds a config from the stored text: "incremental" makes it incremental,
// "bad" fails like an unresolvable directive.
type fakeLoader struct {
	mu   sync.Mutex
	opts []execute.LoadOptions
	cfg  func(text string) (*pipeline.Config, error)
}

func (l *fakeLoader) Load(_ context.Context, text []byte, opts execute.LoadOptions) (*pipeline.Config, error) {
	l.mu.Lock()
	l.opts = append(l.opts, opts)
	l.mu.Unlock()
	if l.cfg != nil {
		return l.cfg(string(text))
	}
	if string(text) == "bad" {
		return nil, errors.New(`pipeline.source.config.connection_url: directive ${env:PG_URL} cannot be resolved: PG_URL is not set`)
	}
	return &pipeline.Config{Version: 1, Name: "orders",
		Source: pipeline.Connector{Type: "generate"}, Sink: pipeline.Connector{Type: "stdout"}}, nil
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type fakeMetrics struct {
	cluster.NopMetrics
	mu          sync.Mutex
	claimed     int
	finished    []string
	reclaimed   []string
	unreachable []bool
	perClaim    []int
	perFinish   []int
}

func (m *fakeMetrics) RunsPerClaim(n int)  { m.observe(&m.perClaim, n) }
func (m *fakeMetrics) RunsPerFinish(n int) { m.observe(&m.perFinish, n) }

// observe appends n to one of the batch-size records.
func (m *fakeMetrics) observe(to *[]int, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*to = append(*to, n)
}

func (m *fakeMetrics) RunClaimed(string, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claimed++
}

// RunFinished records "pipeline:status/reason".
func (m *fakeMetrics) RunFinished(pipeline, status, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finished = append(m.finished, pipeline+":"+status+"/"+reason)
}

func (m *fakeMetrics) Reclaimed(outcome string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reclaimed = append(m.reclaimed, outcome)
}

func (m *fakeMetrics) HistoryUnreachable(b bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unreachable = append(m.unreachable, b)
}

// failing reports whether the member last said its renewals fail: unhealthy alone may
// be a failed heartbeat after a renewal that still answered.
func (m *fakeMetrics) failing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.unreachable) > 0 && m.unreachable[len(m.unreachable)-1]
}

// claimed describes a run to submit (history.add), as a claim will hand it out.
func claimed(id string) cluster.Claimed {
	return cluster.Claimed{ID: id, Name: "orders", Tenant: "acme", Pool: "default", MaxAttempts: 3,
		Config: "ok", LogicalAt: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
}

// ids describes n runs whose ids sort in their order.
func ids(prefix string, n int) []cluster.Claimed {
	out := make([]cluster.Claimed, n)
	for i := range out {
		out[i] = claimed(fmt.Sprintf("%s%03d", prefix, i))
	}
	return out
}

type harness struct {
	store   *history
	runner  *fakeRunner
	loader  *fakeLoader
	clock   *fakeClock
	metrics *fakeMetrics
	red     *secret.Redactor
	member  *cluster.Member
	steps   loopSteps
}

// start builds and starts a member with short timings on store; edit tunes cfg and deps
// first.
func start(t *testing.T, store *history, runner *fakeRunner, edit func(*cluster.Config, *cluster.Deps)) *harness {
	t.Helper()
	h := &harness{store: store, runner: runner, loader: &fakeLoader{}, clock: newFakeClock(),
		metrics: &fakeMetrics{}, red: secret.NewRedactor(), steps: newLoopSteps()}
	cfg := cluster.Config{
		InstanceID: "m1", Listen: "127.0.0.1:8080", Host: "host", Version: "test", PID: 42,
		MaxConcurrent: 4, LeaseTTL: 300 * time.Millisecond, PollInterval: 20 * time.Millisecond,
		// The kill timeout only ends a test whose runs ignore their tokens: handing a run
		// back is a real transaction, which a loaded machine can hold for over a second.
		MaxAttempts: 3, ShutdownGrace: 50 * time.Millisecond, ShutdownKill: stepDeadline,
	}
	deps := cluster.Deps{Store: store, Loader: h.loader, Runner: runner, State: memState{},
		Clock: h.clock, Metrics: h.metrics, Redactor: h.red,
		Log: slog.New(slog.DiscardHandler), Events: h.steps.events()}
	if edit != nil {
		edit(&cfg, &deps)
	}
	m, err := cluster.New(cfg, deps)
	require.NoError(t, err)
	require.NoError(t, m.Start(context.Background()))
	t.Cleanup(m.Stop)
	h.member = m
	return h
}

type memState struct{}

func (memState) Load(context.Context, string) (*state.Bookmark, error) { return nil, nil }
func (memState) Save(context.Context, string, state.Bookmark) error    { return nil }

// waitFor ends a wait for a state of the member that will never come; like
// stepDeadline it is no measure of speed, so it is generous for a loaded machine.
const (
	waitFor = stepDeadline
	tick    = 5 * time.Millisecond
)

// fakePlanner answers a fixed plan (or error) and records the counts it was asked for.
type fakePlanner struct {
	mu     sync.Mutex
	plan   []execute.ShardSlice
	err    error
	counts []int
}

func (p *fakePlanner) Plan(_ context.Context, _ *pipeline.Config, n int) ([]execute.ShardSlice, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts = append(p.counts, n)
	return p.plan, p.err
}

// sharding has the member plan with pl and keep its shards in the history; on turns
// Config.Sharding on.
func sharding(pl *fakePlanner, on bool) func(*cluster.Config, *cluster.Deps) {
	return func(cfg *cluster.Config, deps *cluster.Deps) {
		cfg.Sharding = on
		deps.Shards, deps.Planner = deps.Store.(cluster.ShardStore), pl
	}
}

// receive waits for a value (or the close) of ch; the deadline only ends a test whose
// member never sends.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(stepDeadline):
		t.Fatalf("%s: nothing after %s", what, stepDeadline)
		var zero T
		return zero
	}
}
