package runs_test

import (
	"context"
	"errors"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
)

var (
	admin    = runs.Principal{Name: "alice", Role: runs.Admin}
	operator = runs.Principal{Name: "olga", Role: runs.Operator}
	viewer   = runs.Principal{Name: "victor", Role: runs.Viewer}
	acme     = runs.Principal{Name: "acme-bot", Role: runs.Operator, Tenant: "acme"}
	globex   = runs.Principal{Name: "globex-bot", Role: runs.Admin, Tenant: "globex"}

	epoch = time.Date(2026, 5, 1, 23, 30, 0, 0, time.UTC)
)

// baseConfig reads DB_URL from the environment and declares one param, so tests see
// resolution, raw storage and params.
const baseConfig = `version: 1
name: orders
pipeline:
  source:
    type: gen
    config:
      count: 10
      api_token: tok-123
  sink:
    type: db
    config:
      connection_url: "${env:DB_URL}"
      table_name: "orders_${param.region}"
      password: hunter2-literal
      key: [id]
params:
  region: { type: string, default: eu }
`

// baseConfigJSON is baseConfig as JSON with every map's keys in another order.
const baseConfigJSON = `{"params": {"region": {"default": "eu", "type": "string"}},
 "pipeline": {"sink": {"config": {"key": ["id"], "password": "hunter2-literal", "table_name": "orders_${param.region}",
   "connection_url": "${env:DB_URL}"}, "type": "db"},
   "source": {"config": {"api_token": "tok-123", "count": 10}, "type": "gen"}},
 "name": "orders", "version": 1}`

type env struct{ vars map[string]string }

func (e env) LookupEnv(name string) (string, bool) { v, ok := e.vars[name]; return v, ok }
func (e env) ReadFile(path string) ([]byte, error) {
	return nil, errors.New("no files in this test: " + path)
}

type catalog map[string]pipeline.Spec

func (c catalog) Spec(typ string) (pipeline.Spec, bool) { s, ok := c[typ]; return s, ok }
func (c catalog) Types(role pipeline.Role) []string {
	var out []string
	for n, s := range c {
		if s.Roles&role != 0 {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func newCatalog() catalog {
	return catalog{
		"out": {Type: "out", Roles: pipeline.RoleSink, SingleObject: true, Fields: []pipeline.FieldSpec{
			{Name: "path", Type: pipeline.FieldString, Required: true},
		}},
		"gen": {Type: "gen", Roles: pipeline.RoleSource, Shardable: true, Fields: []pipeline.FieldSpec{
			{Name: "count", Type: pipeline.FieldInt},
			{Name: "api_token", Type: pipeline.FieldString},
			{Name: "cursor_col", Type: pipeline.FieldString},
			{Name: "ratio", Type: pipeline.FieldNumber},
			{Name: "strict", Type: pipeline.FieldBool},
		}},
		"db": {Type: "db", Roles: pipeline.RoleSink, Fields: []pipeline.FieldSpec{
			{Name: "connection_url", Type: pipeline.FieldString, Required: true},
			{Name: "table_name", Type: pipeline.FieldString, Required: true},
			{Name: "password", Type: pipeline.FieldString},
			{Name: "key", Type: pipeline.FieldStrings},
		}},
	}
}

// redactor masks every value registered by the loader, like the process-wide one.
type redactor struct {
	mu     sync.Mutex
	values []string
}

func (r *redactor) Register(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.values = append(r.values, values...)
}

func (r *redactor) Redact(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.values {
		if v != "" {
			s = strings.ReplaceAll(s, v, "[secret]")
		}
	}
	return s
}

type resolver map[string][]string

func (r resolver) LookupIP(_ context.Context, host string) ([]net.IP, error) {
	addrs, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IP, len(addrs))
	for i, a := range addrs {
		out[i] = net.ParseIP(a)
	}
	return out, nil
}

type waker struct {
	mu sync.Mutex
	n  int
}

func (w *waker) Wake() { w.mu.Lock(); w.n++; w.mu.Unlock() }
func (w *waker) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

type canceller struct {
	mu    sync.Mutex
	local map[string]bool
	fired []string
}

func (c *canceller) CancelLocal(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.local[id] {
		return false
	}
	c.fired = append(c.fired, id)
	return true
}

type clock struct{ t time.Time }

func (c clock) Now() time.Time { return c.t }

type harness struct {
	svc       *runs.Service
	store     *testStore
	waker     *waker
	canceller *canceller
	redactor  *redactor
	metrics   *runMetrics
}

// runMetrics records what the service counts, "pipeline:status/reason" per run.
type runMetrics struct {
	mu       sync.Mutex
	finished []string
}

func (m *runMetrics) RunFinished(pipeline, status, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finished = append(m.finished, pipeline+":"+status+"/"+reason)
}

func (m *runMetrics) counted() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.finished...)
}

type option func(*runs.Deps, *runs.Config)

func withConfig(f func(*runs.Config)) option { return func(_ *runs.Deps, c *runs.Config) { f(c) } }
func withDeps(f func(*runs.Deps)) option     { return func(d *runs.Deps, _ *runs.Config) { f(d) } }

func newHarness(t *testing.T, opts ...option) *harness {
	t.Helper()
	h := &harness{
		store:     newTestStore(t),
		waker:     &waker{},
		canceller: &canceller{local: map[string]bool{}},
		redactor:  &redactor{},
		metrics:   &runMetrics{},
	}
	loader := &execute.Loader{
		Decoder:  configtext.Decoder{},
		Env:      env{vars: map[string]string{"DB_URL": "postgres://app:s3cr3t-pw@db/wh", "RUN_POOL": "gpu"}},
		Catalog:  newCatalog(),
		Redactor: h.redactor,
	}
	deps := runs.Deps{
		Store:     h.store,
		Loader:    loader,
		Waker:     h.waker,
		Canceller: h.canceller,
		Clock:     clock{t: epoch},
		Resolver: resolver{
			"hooks.example.com": {"203.0.113.7", "2001:db8::7"},
			"evil.example.com":  {"203.0.113.8", "169.254.169.254"},
			"sneaky.example":    {"fe80::1"},
			"hooks.internal":    {"169.254.10.10"},
		},
		Redactor: h.redactor,
		Metrics:  h.metrics,
	}
	cfg := runs.Config{MaxQueued: 100, MaxAttempts: 3}
	for _, o := range opts {
		o(&deps, &cfg)
	}
	h.svc = runs.New(deps, cfg)
	return h
}

func req(p runs.Principal, config string) runs.SubmitRequest {
	return runs.SubmitRequest{Principal: p, TriggerKind: "api", Config: []byte(config)}
}

func (h *harness) submit(t *testing.T, r runs.SubmitRequest) runs.SubmitResult {
	t.Helper()
	res, err := h.svc.Submit(context.Background(), r)
	require.NoError(t, err)
	return res
}
