package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/secret"
	"github.com/sluicehq/sluice/domain/state"
)

var errDown = errors.New("connection refused")

// fakeStore is an in-memory history. Every method fails with errDown while down is set.
type fakeStore struct {
	down atomic.Bool
	// stall, while set, holds Renew and Heartbeat until the channel is closed, whatever
	// their context says: a history that swallows statements.
	stall         atomic.Pointer[chan struct{}]
	stalled       *steps       // statements held by stall
	claimAttempts atomic.Int64 // every Claim call, answered or not
	handBackCalls atomic.Int64

	mu           sync.Mutex
	pending      []cluster.Claimed
	claimCalls   []int
	epoch        int64
	finished     map[string]cluster.Outcome
	handedBack   map[string]cluster.Progress
	progress     map[string][]cluster.Progress
	logs         map[string][]cluster.LogLine
	events       []string // "logs:ID", "finish:ID", "handback:ID" in order
	notRenewed   map[string]bool
	lostOn       map[string]bool // fenced writes of these ids answer ErrLeaseLost
	cancelFlags  map[string]bool
	heartbeats   []cluster.MemberRow
	renewCalls   int
	orphanCalls  []string
	reclaimCalls int
	stopped      []string
	// reclaims is what the next Reclaim reports, once.
	reclaims []cluster.Reclaimed
}

func newFakeStore(pending ...cluster.Claimed) *fakeStore {
	return &fakeStore{
		stalled:     newSteps(),
		pending:     pending,
		finished:    map[string]cluster.Outcome{},
		handedBack:  map[string]cluster.Progress{},
		progress:    map[string][]cluster.Progress{},
		logs:        map[string][]cluster.LogLine{},
		notRenewed:  map[string]bool{},
		lostOn:      map[string]bool{},
		cancelFlags: map[string]bool{},
	}
}

func (s *fakeStore) waitStall() {
	if ch := s.stall.Load(); ch != nil {
		s.stalled.add()
		<-*ch
	}
}

func (s *fakeStore) add(c ...cluster.Claimed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, c...)
}

func (s *fakeStore) with(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

func (s *fakeStore) Claim(_ context.Context, owner cluster.Owner, pools []string, n int, ttl time.Duration) ([]cluster.Claimed, error) {
	s.claimAttempts.Add(1)
	if s.down.Load() {
		return nil, errDown
	}
	if owner.InstanceID == "" || len(pools) == 0 || ttl <= 0 || n <= 0 {
		return nil, fmt.Errorf("bad claim: owner %q pools %v n %d ttl %s", owner.InstanceID, pools, n, ttl)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claimCalls = append(s.claimCalls, n)
	k := min(n, len(s.pending))
	got := slices.Clone(s.pending[:k])
	s.pending = s.pending[k:]
	for i := range got {
		s.epoch++
		got[i].Epoch = s.epoch
		got[i].Attempt++
	}
	return got, nil
}

func (s *fakeStore) Renew(_ context.Context, _ string, held []cluster.Ref, _ time.Duration) ([]cluster.Ref, error) {
	s.waitStall()
	if s.down.Load() {
		return nil, errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renewCalls++
	var out []cluster.Ref
	for _, r := range held {
		if !s.notRenewed[r.ID] {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *fakeStore) Progress(_ context.Context, _ string, ref cluster.Ref, p cluster.Progress) error {
	if s.down.Load() {
		return errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lostOn[ref.ID] {
		return run.ErrLeaseLost
	}
	s.progress[ref.ID] = append(s.progress[ref.ID], p)
	return nil
}

func (s *fakeStore) Finish(_ context.Context, _ string, ref cluster.Ref, o cluster.Outcome, _ runs.CallbackBuilder) error {
	if s.down.Load() {
		return errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lostOn[ref.ID] || s.notRenewed[ref.ID] {
		return run.ErrLeaseLost
	}
	s.finished[ref.ID] = o
	s.logs[ref.ID] = append(s.logs[ref.ID], o.Logs...) // written in the finish's transaction
	s.events = append(s.events, "finish:"+ref.ID)
	return nil
}

func (s *fakeStore) HandBack(_ context.Context, _ string, ref cluster.Ref, p cluster.Progress) error {
	s.handBackCalls.Add(1)
	if s.down.Load() {
		return errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lostOn[ref.ID] || s.notRenewed[ref.ID] {
		return run.ErrLeaseLost
	}
	s.handedBack[ref.ID] = p
	s.events = append(s.events, "handback:"+ref.ID)
	return nil
}

func (s *fakeStore) Reclaim(context.Context, runs.CallbackBuilder) ([]cluster.Reclaimed, error) {
	if s.down.Load() {
		return nil, errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reclaimCalls++
	out := s.reclaims
	s.reclaims = nil
	return out, nil
}

// NextExpiry knows no leases of other members: only the renewal ticks reclaim.
func (s *fakeStore) NextExpiry(context.Context) (time.Duration, bool, error) {
	if s.down.Load() {
		return 0, false, errDown
	}
	return 0, false, nil
}

func (s *fakeStore) ReclaimOrphans(_ context.Context, self string, _ runs.CallbackBuilder) ([]cluster.Reclaimed, error) {
	if s.down.Load() {
		return nil, errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orphanCalls = append(s.orphanCalls, self)
	return []cluster.Reclaimed{{ID: "orphan", Outcome: "requeued"}}, nil
}

func (s *fakeStore) CancelRequested(_ context.Context, ids []string) ([]string, error) {
	if s.down.Load() {
		return nil, errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range ids {
		if s.cancelFlags[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

func (s *fakeStore) AppendLogs(_ context.Context, id string, lines []cluster.LogLine) error {
	if s.down.Load() {
		return errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logs[id] = append(s.logs[id], lines...)
	s.events = append(s.events, "logs:"+id)
	return nil
}

func (s *fakeStore) Heartbeat(_ context.Context, row cluster.MemberRow) error {
	s.waitStall()
	if s.down.Load() {
		return errDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heartbeats = append(s.heartbeats, row)
	return nil
}

func (s *fakeStore) MarkStopped(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = append(s.stopped, id)
	return nil
}

func (s *fakeStore) PendingByPool(context.Context) (map[string]int, error) { return nil, nil }
func (s *fakeStore) Ping(context.Context) error                            { return nil }

func (s *fakeStore) outcome(id string) (cluster.Outcome, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.finished[id]
	return o, ok
}

func (s *fakeStore) handBack(id string) (cluster.Progress, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.handedBack[id]
	return p, ok
}

func (s *fakeStore) settledCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.finished) + len(s.handedBack)
}

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

// claimed builds a pending run as the store would hand it out.
func claimed(id string) cluster.Claimed {
	return cluster.Claimed{ID: id, Name: "orders", Tenant: "acme", Pool: "default", MaxAttempts: 3,
		Config: "ok", LogicalAt: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), CreatedAt: time.Now()}
}

func ids(prefix string, n int) []cluster.Claimed {
	out := make([]cluster.Claimed, n)
	for i := range out {
		out[i] = claimed(fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

type harness struct {
	store   *fakeStore
	runner  *fakeRunner
	loader  *fakeLoader
	clock   *fakeClock
	metrics *fakeMetrics
	red     *secret.Redactor
	member  *cluster.Member
	steps   loopSteps
}

// start builds and starts a member with short timings; edit tunes cfg and deps first.
func start(t *testing.T, store *fakeStore, runner *fakeRunner, edit func(*cluster.Config, *cluster.Deps)) *harness {
	t.Helper()
	h := &harness{store: store, runner: runner, loader: &fakeLoader{}, clock: newFakeClock(),
		metrics: &fakeMetrics{}, red: secret.NewRedactor(), steps: newLoopSteps()}
	cfg := cluster.Config{
		InstanceID: "m1", Listen: "127.0.0.1:8080", Host: "host", Version: "test", PID: 42,
		MaxConcurrent: 4, LeaseTTL: 300 * time.Millisecond, PollInterval: 20 * time.Millisecond,
		MaxAttempts: 3, ShutdownGrace: 50 * time.Millisecond, ShutdownKill: time.Second,
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

const (
	waitFor = 3 * time.Second
	tick    = 5 * time.Millisecond
)
