package console_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/adapters/console"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// tokens are the principals of the tests, by token.
var tokens = map[string]runs.Principal{
	"op-token":     {Name: "otto", Role: runs.Operator},
	"viewer-token": {Name: "vic", Role: runs.Viewer},
	"admin-token":  {Name: "ada", Role: runs.Admin},
	"acme-token":   {Name: "acme-bot", Role: runs.Operator, Tenant: "acme"},
}

type tokenTable map[string]runs.Principal

func (t tokenTable) Authenticate(token string) (runs.Principal, error) {
	if p, ok := t[token]; ok {
		return p, nil
	}
	return runs.Principal{}, errors.New("the token is not valid")
}

// fakeRuns holds one running run and applies the cancel rule of the use-case (operator
// or more), so the console's wiring of principals can be observed.
type fakeRuns struct {
	mu        sync.Mutex
	filters   []runs.Filter   // every List call's filter
	cancelled []string        // principals whose cancel went through
	calls     int             // Cancel calls, refused or not
	endless   bool            // the run's log never ends (it keeps running)
	getCtx    context.Context // the context of the last Get
}

var theRun = &runs.Record{ID: "01900000-0000-7000-8000-000000000001", Name: "orders", Pool: "default",
	Status: string(run.Running), MaxAttempts: 1, CreatedAt: time.Unix(1700000000, 0)}

func (f *fakeRuns) Get(ctx context.Context, _ runs.Principal, id string) (*runs.Record, error) {
	f.mu.Lock()
	f.getCtx = ctx
	f.mu.Unlock()
	if id == hostileRun.ID {
		r := *hostileRun
		return &r, nil
	}
	if id == shardedRun.ID {
		r := *shardedRun
		return &r, nil
	}
	if id != theRun.ID {
		return nil, run.ErrNotFound
	}
	r := *theRun
	return &r, nil
}

// List answers theRun, with a next page when asked for the first one.
func (f *fakeRuns) List(_ context.Context, _ runs.Principal, flt runs.Filter) (runs.Page, error) {
	f.mu.Lock()
	f.filters = append(f.filters, flt)
	f.mu.Unlock()
	r, h := *theRun, *hostileRun
	page := runs.Page{Runs: []*runs.Record{&r, &h}}
	if flt.Cursor == "" {
		page.NextCursor = "cursor-2"
	}
	return page, nil
}

func (f *fakeRuns) listed() []runs.Filter {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]runs.Filter(nil), f.filters...)
}

func (f *fakeRuns) Cancel(_ context.Context, p runs.Principal, id string) (*runs.Record, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if err := runs.Require(p, runs.Operator, "cancel runs"); err != nil {
		return nil, false, err
	}
	f.cancelled = append(f.cancelled, p.Name)
	r := *theRun
	return &r, false, nil
}

func (f *fakeRuns) state() (calls int, cancelled []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, append([]string(nil), f.cancelled...)
}

func (f *fakeRuns) Rollback(context.Context, runs.Principal, string, []byte) (runs.SubmitResult, error) {
	return runs.SubmitResult{}, errors.New("not used")
}

func (f *fakeRuns) Config(context.Context, runs.Principal, string) (string, error) {
	return "name: orders\n", nil
}

func (f *fakeRuns) Logs(context.Context, runs.Principal, string, int64, int) (runs.LogPage, error) {
	return runs.LogPage{Done: !f.endless}, nil
}

// hostileRun carries markup in every value a submitter chooses.
var hostileRun = &runs.Record{ID: "01900000-0000-7000-8000-000000000003", Name: "x", Pool: "default",
	Status: string(run.Failed), MaxAttempts: 1, Labels: map[string]string{"k": "<img src=x onerror=alert(1)>"},
	ErrorCode: "source_failed", ErrorMessage: "<img src=x onerror=alert(1)>", CreatedAt: time.Unix(1700000000, 0)}

// shardedRun was split in two shards: one done, one failed with a URL password in its
// error.
var shardedRun = &runs.Record{ID: "01900000-0000-7000-8000-000000000002", Name: "big", Pool: "default",
	Status: string(run.Sharded), MaxAttempts: 1, ShardCount: 2, Shards: &runs.ShardSummary{Total: 2, Completed: 1, Failed: 1},
	CreatedAt: time.Unix(1700000000, 0)}

func (f *fakeRuns) Shards(_ context.Context, _ runs.Principal, id, _ string, _ int) (runs.ShardPage, error) {
	if id != shardedRun.ID {
		return runs.ShardPage{}, nil
	}
	return runs.ShardPage{Shards: []runs.ShardRecord{
		{Index: 0, Status: "completed", Attempt: 1, MaxAttempts: 1, Owner: "member-a",
			Stats: runs.Stats{RowsRead: 100, RowsWritten: 100}},
		{Index: 1, Status: "failed", Attempt: 1, MaxAttempts: 1, Owner: "member-b",
			Stats: runs.Stats{RowsRead: 100, RowsWritten: 40}, ErrorCode: "sink_failed",
			ErrorMessage: "dial postgres://app:hunter2@db/x failed"},
	}}, nil
}

func (f *fakeRuns) Audit(_ context.Context, p runs.Principal, _ int64, _ int) ([]runs.AuditEntry, error) {
	if err := runs.Require(p, runs.Admin, "read the audit trail"); err != nil {
		return nil, err
	}
	return nil, nil
}

func explain(err error) (int, string, string, bool) {
	switch {
	case errors.Is(err, runs.ErrForbidden):
		return http.StatusForbidden, "forbidden", err.Error(), true
	case errors.Is(err, run.ErrNotFound):
		return http.StatusNotFound, "not_found", err.Error(), true
	}
	return http.StatusInternalServerError, "internal", "internal error", false
}

// clock is a settable clock for session expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testKey signs the sessions of every test console: consoles built with it accept each
// other's cookies, as the members of one cluster do.
var testKey = []byte("0123456789abcdef0123456789abcdef")

func newConsole(f *fakeRuns, clk *clock, signouts console.Signouts) http.Handler {
	h, err := console.New(console.Config{SessionKey: testKey, Now: clk.Now},
		console.Deps{Tokens: tokenTable(tokens), Signouts: signouts, Runs: f, Explain: explain, Cluster: fakeCluster{},
			Redact: func(s string) string { return strings.ReplaceAll(s, "app:hunter2@", "REDACTED@") }})
	if err != nil {
		panic(err)
	}
	return h
}

// fakeCluster is two members (one draining) of pools default and gpu, and a third that
// stopped; gpu has pending runs and no live member left to serve them.
type fakeCluster struct{}

func (fakeCluster) Status(context.Context) (console.ClusterStatus, error) {
	at := time.Date(2026, 12, 3, 11, 59, 58, 0, time.UTC)
	return console.ClusterStatus{Clustered: true,
		Members: []console.Member{
			{InstanceID: "member-a", Host: "h1", Listen: "10.0.0.1:8080", Pools: []string{"default"}, InFlight: 2,
				MaxConcurrent: 4, Live: true, HeartbeatAt: at, HeartbeatAge: 2 * time.Second},
			{InstanceID: "member-b", Host: "h2", Listen: "10.0.0.2:8080", Pools: []string{"default", "gpu"},
				MaxConcurrent: 4, Live: true, Draining: true, HeartbeatAt: at, HeartbeatAge: 2 * time.Second},
			{InstanceID: "member-c", Host: "h3", Listen: "10.0.0.3:8080", Pools: []string{"gpu"}, Stopped: true,
				HeartbeatAt: at.Add(-time.Hour), HeartbeatAge: time.Hour},
		},
		Pending: map[string]int{"gpu": 7, "default": 1},
		Leader:  &console.Leader{InstanceID: "member-a", Host: "h1", Term: 12, StartedAt: at.Add(-time.Minute), HeartbeatAt: at},
	}, nil
}
