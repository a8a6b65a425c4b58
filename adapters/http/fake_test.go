package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// Tokens of the principals every test server knows.
const (
	adminToken    = "admin-token-0123456789"
	operatorToken = "operator-token-0123456789"
	viewerToken   = "viewer-token-0123456789"
	tenantToken   = "tenant-token-0123456789"
	tenantOpToken = "tenant-op-token-0123456789"
)

func principals() []sluicehttp.Principal {
	return []sluicehttp.Principal{
		{Name: "ann", Token: adminToken, Role: runs.Admin},
		{Name: "otto", Token: operatorToken, Role: runs.Operator},
		{Name: "vic", Token: viewerToken, Role: runs.Viewer},
		{Name: "acme-viewer", Token: tenantToken, Role: runs.Viewer, Tenant: "acme"},
		{Name: "acme-operator", Token: tenantOpToken, Role: runs.Operator, Tenant: "acme"},
	}
}

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// sampleRecord is a finished run with every optional part filled.
func sampleRecord(id string) *runs.Record {
	ended := t0.Add(9 * time.Second)
	return &runs.Record{
		ID: id, Name: "orders", Tenant: "", Pool: "default", Status: string(run.Completed),
		Labels: map[string]string{"env": "prod"}, TriggerKind: string(run.TriggerAPI), RunKey: "2026-03-04",
		RunDate: "2026-03-04", Attempt: 1, MaxAttempts: 3,
		Attempts: []run.Attempt{{N: 1, InstanceID: "i-1", ClaimedAt: t0.Add(time.Second), EndedAt: ended, Outcome: run.OutcomeCompleted}},
		Config:   "pipeline: secret", CreatedAt: t0, ClaimedAt: t0.Add(time.Second), StartedAt: t0.Add(2 * time.Second),
		FinishedAt: ended, Stats: runs.Stats{RowsRead: 10, RowsWritten: 9, Pages: 2, Bytes: 300, ElapsedMS: 7000},
	}
}

// fakeRuns is a RunService whose answers each test sets; nil funcs give a happy answer.
type fakeRuns struct {
	mu       sync.Mutex
	submit   func(runs.SubmitRequest) (runs.SubmitResult, error)
	get      func(runs.Principal, string) (*runs.Record, error)
	list     func(runs.Principal, runs.Filter) (runs.Page, error)
	cancel   func(runs.Principal, string) (*runs.Record, bool, error)
	del      func(runs.Principal, string) error
	rollback func(runs.Principal, string, []byte) (runs.SubmitResult, error)
	config   func(runs.Principal, string) (string, error)
	logs     func(runs.Principal, string, int64, int) (runs.LogPage, error)
	follow   func(runs.Principal, string) error
	shards   func(runs.Principal, string, string, int) (runs.ShardPage, error)
	audit    func(runs.Principal, int64, int) ([]runs.AuditEntry, error)

	calls      []string
	submitted  []runs.SubmitRequest
	filters    []runs.Filter
	principals []runs.Principal
	rolledBack [][]byte
}

func (f *fakeRuns) record(call string, p runs.Principal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	f.principals = append(f.principals, p)
}

func (f *fakeRuns) lastPrincipal() runs.Principal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.principals[len(f.principals)-1]
}

func (f *fakeRuns) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fakeRuns) Submit(_ context.Context, req runs.SubmitRequest) (runs.SubmitResult, error) {
	f.record("submit", req.Principal)
	f.mu.Lock()
	f.submitted = append(f.submitted, req)
	f.mu.Unlock()
	if f.submit != nil {
		return f.submit(req)
	}
	return runs.SubmitResult{RunID: "r-new", Status: "pending"}, nil
}

func (f *fakeRuns) Get(_ context.Context, p runs.Principal, id string) (*runs.Record, error) {
	f.record("get", p)
	if f.get != nil {
		return f.get(p, id)
	}
	return sampleRecord(id), nil
}

func (f *fakeRuns) List(_ context.Context, p runs.Principal, fl runs.Filter) (runs.Page, error) {
	f.record("list", p)
	f.mu.Lock()
	f.filters = append(f.filters, fl)
	f.mu.Unlock()
	if f.list != nil {
		return f.list(p, fl)
	}
	return runs.Page{Runs: []*runs.Record{sampleRecord("r-1")}}, nil
}

func (f *fakeRuns) Cancel(_ context.Context, p runs.Principal, id string) (*runs.Record, bool, error) {
	f.record("cancel", p)
	if f.cancel != nil {
		return f.cancel(p, id)
	}
	rec := sampleRecord(id)
	rec.Status = string(run.Cancelled)
	return rec, true, nil
}

func (f *fakeRuns) Delete(_ context.Context, p runs.Principal, id string) error {
	f.record("delete", p)
	if f.del != nil {
		return f.del(p, id)
	}
	return nil
}

func (f *fakeRuns) Rollback(_ context.Context, p runs.Principal, id string, cfg []byte) (runs.SubmitResult, error) {
	f.record("rollback", p)
	f.mu.Lock()
	f.rolledBack = append(f.rolledBack, cfg)
	f.mu.Unlock()
	if f.rollback != nil {
		return f.rollback(p, id, cfg)
	}
	return runs.SubmitResult{RunID: "r-rollback", Status: "pending"}, nil
}

func (f *fakeRuns) Config(_ context.Context, p runs.Principal, id string) (string, error) {
	f.record("config", p)
	if f.config != nil {
		return f.config(p, id)
	}
	return "pipeline:\n  name: orders\n", nil
}

func (f *fakeRuns) Logs(_ context.Context, p runs.Principal, id string, after int64, limit int) (runs.LogPage, error) {
	f.record("logs", p)
	if f.logs != nil {
		return f.logs(p, id, after, limit)
	}
	return runs.LogPage{Lines: []runs.LogLine{}, Next: after, Done: true}, nil
}

func (f *fakeRuns) Follow(_ context.Context, p runs.Principal, id string) error {
	f.record("follow", p)
	if f.follow != nil {
		return f.follow(p, id)
	}
	return nil
}

func (f *fakeRuns) Shards(_ context.Context, p runs.Principal, id, cursor string, limit int) (runs.ShardPage, error) {
	f.record("shards", p)
	if f.shards != nil {
		return f.shards(p, id, cursor, limit)
	}
	if cursor != "" {
		return runs.ShardPage{}, &runs.InvalidRequestError{Field: "cursor", Message: "is not a cursor this server issued"}
	}
	return runs.ShardPage{Shards: []runs.ShardRecord{}}, nil
}

func (f *fakeRuns) Audit(_ context.Context, p runs.Principal, after int64, limit int) ([]runs.AuditEntry, error) {
	f.record("audit", p)
	if f.audit != nil {
		return f.audit(p, after, limit)
	}
	return []runs.AuditEntry{}, nil
}

// env is one handler under test with its fake service and captured log.
type env struct {
	h    http.Handler
	runs *fakeRuns
	log  *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newEnv(t *testing.T, mod ...func(*sluicehttp.Config, *sluicehttp.Deps)) *env {
	t.Helper()
	e := &env{runs: &fakeRuns{}, log: &syncBuffer{}}
	cfg := sluicehttp.Config{Auth: sluicehttp.AuthConfig{Principals: principals()}, Version: "1.2.3",
		PollInterval: 10 * time.Millisecond}
	deps := sluicehttp.Deps{Runs: e.runs, Log: slog.New(slog.NewTextHandler(e.log, nil))}
	for _, m := range mod {
		m(&cfg, &deps)
	}
	e.h = sluicehttp.New(cfg, deps)
	return e
}

// do sends one request; body may be a string, []byte or a value to encode as JSON.
func (e *env) do(t *testing.T, method, path, token string, body any, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

// errorOf decodes an error answer and checks its shape.
func errorOf(t *testing.T, rec *httptest.ResponseRecorder) (code, message string, details map[string]any) {
	t.Helper()
	var body struct {
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	require.NotEmpty(t, body.Error.Code, rec.Body.String())
	require.NotEmpty(t, body.Error.Message, rec.Body.String())
	return body.Error.Code, body.Error.Message, body.Error.Details
}

func decode(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m), rec.Body.String())
	return m
}

func errNotFound() error { return fmt.Errorf("run r-x: %w", run.ErrNotFound) }
