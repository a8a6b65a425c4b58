package storecontract

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
)

// Harness is what the suite needs of one database.
type Harness struct {
	// NewURL returns the --history URL of a fresh, empty history.
	NewURL func(t *testing.T) string
	// Shared: two stores opened on one URL see the same history (false for memory,
	// where each Open is a new database).
	Shared bool
	// SimpleProtocol opens every store of the case with store.Options.SimpleProtocol.
	SimpleProtocol bool
	// Groups narrows the run to the named groups of cases; empty means all.
	Groups []string
}

// Run runs every case against h. Each case gets its own history.
func Run(t *testing.T, h Harness) {
	t.Helper()
	groups := []struct {
		name  string
		cases map[string]func(*testing.T, *env)
	}{
		{"runs", runsCases()},
		{"admission", admissionCases()},
		{"lease", leaseCases()},
		{"finish batches", finishBatchCases()},
		{"retries", retryCases()},
		{"oracle", oracleCases()},
		{"reclaim", reclaimCases()},
		{"shards", shardCases()},
		{"pools", poolCases()},
		{"callbacks", callbackCases()},
		{"misc", miscCases()},
		{"schema", schemaCases()},
		{"vault", vaultCases()},
		{"templates", templateCases()},
		{"change requests", changeRequestCases()},
		{"schedules", scheduleCases()},
		{"tick batches", tickBatchCases()},
		{"purge", purgeCases()},
		{"checks", checkCases()},
		{"windows", windowCases()},
		{"signouts", signoutCases()},
		{"follows", followCases()},
	}
	for _, g := range groups {
		if len(h.Groups) > 0 && !slices.Contains(h.Groups, g.name) {
			continue
		}
		t.Run(g.name, func(t *testing.T) {
			for name, c := range g.cases {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					c(t, newEnv(t, h))
				})
			}
		})
	}
}

// env is one case's history.
type env struct {
	h     Harness
	url   string
	s     *store.Store
	hook  *counter
	ctx   context.Context
	owner cluster.Owner
}

func newEnv(t *testing.T, h Harness) *env {
	t.Helper()
	e := &env{h: h, url: h.NewURL(t), hook: &counter{}, ctx: context.Background(),
		owner: cluster.Owner{InstanceID: "member-a", Listen: "127.0.0.1:8080"}}
	e.s = e.open(t, store.Options{QueryHook: e.hook})
	require.NoError(t, e.s.Migrate(e.ctx))
	return e
}

// open opens another store on the env's history (a new database for memory).
func (e *env) open(t *testing.T, opts store.Options) *store.Store {
	t.Helper()
	opts.SimpleProtocol = opts.SimpleProtocol || e.h.SimpleProtocol
	s, err := store.Open(e.ctx, e.url, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// counter is a bun.QueryHook that counts statements, leaving out transaction control
// and background NOTIFY wake-ups.
type counter struct {
	mu      sync.Mutex
	queries []string
	// tap, when set, sees every statement, transaction control included (env.tap).
	tap func(*bun.QueryEvent)
}

func (c *counter) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (c *counter) AfterQuery(_ context.Context, ev *bun.QueryEvent) {
	c.mu.Lock()
	tap := c.tap
	c.mu.Unlock()
	if tap != nil {
		tap(ev)
	}
	switch strings.ToUpper(ev.Operation()) {
	case "BEGIN", "COMMIT", "ROLLBACK":
		return
	}
	// A trailing wake-up of an earlier transaction may go out at any time.
	if strings.HasPrefix(ev.Query, "SELECT pg_notify(") {
		return
	}
	c.mu.Lock()
	c.queries = append(c.queries, ev.Query)
	c.mu.Unlock()
}

// during counts the statements fn runs.
func (c *counter) during(fn func()) []string {
	c.mu.Lock()
	c.queries = nil
	c.mu.Unlock()
	fn()
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.queries...)
}

// rec is a pending run of name in pool default, created now.
func rec(name string, mods ...func(*runs.Record)) *runs.Record {
	now := time.Now().UTC()
	r := &runs.Record{
		ID: uuid.Must(uuid.NewV7()).String(), Name: name, Pool: "default", Status: "pending",
		TriggerKind: "api", RunDate: now.Format(time.DateOnly), LogicalAt: now, MaxAttempts: 3,
		Config: "version: 1\nname: " + name + "\n", CreatedAt: now,
	}
	for _, m := range mods {
		m(r)
	}
	return r
}

// create stores r and requires that it was created.
func (e *env) create(t *testing.T, r *runs.Record) *runs.Record {
	t.Helper()
	res, err := e.s.Create(e.ctx, r, nil)
	require.NoError(t, err)
	require.True(t, res.Created)
	return r
}

// claimOne creates a pending run and claims it for e.owner with ttl.
func (e *env) claimOne(t *testing.T, name string, ttl time.Duration, mods ...func(*runs.Record)) cluster.Claimed {
	t.Helper()
	r := e.create(t, rec(name, mods...))
	got, err := e.s.Claim(e.ctx, e.owner, []string{r.Pool}, 1, ttl)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, r.ID, got[0].ID)
	return got[0]
}

// requestCancel sets the run's cancel flag and answers whether that ended the run.
func (e *env) requestCancel(t *testing.T, id string) bool {
	t.Helper()
	ended, err := e.s.RequestCancel(e.ctx, id)
	require.NoError(t, err)
	return ended
}

func (e *env) get(t *testing.T, id string) *runs.Record {
	t.Helper()
	r, err := e.s.Get(e.ctx, id)
	require.NoError(t, err)
	return r
}

// builder is a CallbackBuilder that records what it saw and answers ok.
type builder struct {
	mu   sync.Mutex
	seen []runs.CallbackInput
	ok   bool
}

func (b *builder) build(in runs.CallbackInput) (string, []byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen = append(b.seen, in)
	return "http://127.0.0.1:9/hook", []byte(`{"run_id":"` + in.RunID + `","status":"` + in.Status + `"}`), b.ok
}

// outbox claims every due callback (for a long lease, so a second call sees none).
func (e *env) outbox(t *testing.T) []cluster.OutboxItem {
	t.Helper()
	items, err := e.s.ClaimOutbox(e.ctx, "sender", 100, time.Hour)
	require.NoError(t, err)
	return items
}

const longTTL = time.Minute
