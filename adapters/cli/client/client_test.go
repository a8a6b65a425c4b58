package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli/client"
	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

const token = "client-test-token"

var t0 = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// service is a RunService fake that keeps runs in memory.
type service struct {
	mu        sync.Mutex
	runs      map[string]*runs.Record
	submitted []runs.SubmitRequest
	filters   []runs.Filter
	logPolls  int
	submitErr error
}

func newService() *service {
	return &service{runs: map[string]*runs.Record{
		"r-1": {ID: "r-1", Name: "orders", Status: "completed", Pool: "default", TriggerKind: "api", RunDate: "2026-05-06",
			Attempt: 1, MaxAttempts: 3, CreatedAt: t0, FinishedAt: t0.Add(time.Minute), Labels: map[string]string{"env": "prod"},
			Stats: runs.Stats{RowsRead: 5, RowsWritten: 5, Pages: 1, ElapsedMS: 1200}},
		"r-2": {ID: "r-2", Name: "orders", Status: "running", Pool: "default", TriggerKind: "api", RunDate: "2026-05-06",
			CreatedAt: t0, Owner: "i-1", OwnerListen: "127.0.0.1:8080"},
	}}
}

func (s *service) Submit(_ context.Context, req runs.SubmitRequest) (runs.SubmitResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.submitErr != nil {
		return runs.SubmitResult{}, s.submitErr
	}
	s.submitted = append(s.submitted, req)
	return runs.SubmitResult{RunID: "r-new", Status: "pending", Replayed: req.IdempotencyKey == "seen"}, nil
}

func (s *service) Get(_ context.Context, _ runs.Principal, id string) (*runs.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return nil, fmt.Errorf("run %s: %w", id, run.ErrNotFound)
	}
	cp := *r
	return &cp, nil
}

func (s *service) List(_ context.Context, _ runs.Principal, f runs.Filter) (runs.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filters = append(s.filters, f)
	out := runs.Page{NextCursor: "c2"}
	for _, id := range slices.Sorted(maps.Keys(s.runs)) {
		out.Runs = append(out.Runs, s.runs[id])
	}
	return out, nil
}

func (s *service) Cancel(_ context.Context, _ runs.Principal, id string) (*runs.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return nil, false, run.ErrNotFound
	}
	return r, r.Status != "running", nil
}

func (s *service) Delete(_ context.Context, _ runs.Principal, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runs[id] == nil {
		return run.ErrNotFound
	}
	if s.runs[id].Status == "running" {
		return fmt.Errorf("run %s is running: %w", id, runs.ErrRunNotTerminal)
	}
	delete(s.runs, id)
	return nil
}

func (s *service) Rollback(context.Context, runs.Principal, string, []byte) (runs.SubmitResult, error) {
	return runs.SubmitResult{RunID: "r-rb", Status: "pending"}, nil
}

func (s *service) Config(context.Context, runs.Principal, string) (string, error) {
	return "pipeline: {}\n", nil
}

// Logs serves three lines, one more per poll; the run ends after the fourth poll.
// Shards answers an empty page: the client never lists shards.
func (s *service) Shards(context.Context, runs.Principal, string, string, int) (runs.ShardPage, error) {
	return runs.ShardPage{Shards: []runs.ShardRecord{}}, nil
}

// Follow answers a missing run as Logs does.
func (s *service) Follow(_ context.Context, _ runs.Principal, id string) error {
	if id == "missing" {
		return run.ErrNotFound
	}
	return nil
}

func (s *service) Logs(_ context.Context, _ runs.Principal, id string, after int64, limit int) (runs.LogPage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "missing" {
		return runs.LogPage{}, run.ErrNotFound
	}
	s.logPolls++
	var lines []runs.LogLine
	for seq := after + 1; seq <= 3 && seq <= int64(s.logPolls) && len(lines) < limit; seq++ {
		lines = append(lines, runs.LogLine{Seq: seq, At: t0, Level: "INFO", Message: fmt.Sprintf("line %d", seq),
			Attrs: map[string]any{"page": seq}})
	}
	next := after
	if len(lines) > 0 {
		next = lines[len(lines)-1].Seq
	}
	return runs.LogPage{Lines: lines, Next: next, Done: s.logPolls >= 4 && next >= 3}, nil
}

func (s *service) Audit(context.Context, runs.Principal, int64, int) ([]runs.AuditEntry, error) {
	return nil, nil
}

func newServer(t *testing.T, svc *service) *httptest.Server {
	t.Helper()
	h := sluicehttp.New(sluicehttp.Config{Auth: sluicehttp.AuthConfig{Token: token}, PollInterval: 5 * time.Millisecond},
		sluicehttp.Deps{Runs: svc})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func newClient(t *testing.T, svc *service) *client.Client {
	t.Helper()
	srv := newServer(t, svc)
	return &client.Client{BaseURL: srv.URL, Token: token, HTTP: srv.Client()}
}

func TestSubmit(t *testing.T) {
	t.Parallel()
	svc := newService()
	c := newClient(t, svc)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res, err := c.Submit(context.Background(), client.SubmitRequest{Config: "pipeline: {}", Name: "n", Pool: "p",
		Labels: map[string]string{"a": "b"}, RunKey: "rk", TimeoutSecs: 9, Clock: &clock,
		Callback: &client.Callback{URL: "https://h/x", On: []string{"failed"}}})
	require.NoError(t, err)
	require.Equal(t, client.SubmitResponse{RunID: "r-new", Status: "pending"}, res)
	got := svc.submitted[0]
	require.Equal(t, "pipeline: {}", string(got.Config))
	require.Equal(t, "n", got.Name)
	require.Equal(t, "rk", got.RunKey)
	require.Equal(t, 9, got.TimeoutSecs)
	require.True(t, got.Clock.Equal(clock))
	require.Equal(t, "https://h/x", got.Callback.URL)

	res, err = c.Submit(context.Background(), client.SubmitRequest{Config: "x", IdempotencyKey: "seen"})
	require.NoError(t, err)
	require.True(t, res.Replayed)
}

func TestSubmitErrorsCarryTheServersCode(t *testing.T) {
	t.Parallel()
	svc := newService()
	svc.submitErr = pipeline.Errors{{Path: "pipeline.name", Pos: pipeline.Pos{Line: 2, Column: 3}, Message: "required"}}
	c := newClient(t, svc)
	_, err := c.Submit(context.Background(), client.SubmitRequest{Config: "x"})
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, http.StatusUnprocessableEntity, ae.Status)
	require.Equal(t, "invalid_config", ae.Code)
	require.Contains(t, ae.Error(), "invalid_config: ")
	require.Equal(t, []client.FieldError{{Path: "pipeline.name", Message: "required", Line: 2, Column: 3}}, ae.FieldErrors())
}

func TestGetListCancelDelete(t *testing.T) {
	t.Parallel()
	svc := newService()
	c := newClient(t, svc)
	ctx := context.Background()

	r, err := c.Get(ctx, "r-1")
	require.NoError(t, err)
	require.Equal(t, "orders", r.Name)
	require.True(t, r.Terminal())
	require.Equal(t, t0, *r.CreatedAt)
	require.Nil(t, r.StartedAt)
	require.Equal(t, int64(1200), r.Stats.ElapsedMS)

	_, err = c.Get(ctx, "nope")
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "not_found", ae.Code)
	require.Equal(t, 404, ae.Status)

	page, err := c.List(ctx, client.ListOptions{Status: []string{"failed", "running"}, Name: "orders",
		Labels: map[string]string{"env": "prod"}, Limit: 10, Cursor: "c1", Since: t0})
	require.NoError(t, err)
	require.Len(t, page.Runs, 2)
	require.Equal(t, "c2", *page.NextCursor)
	f := svc.filters[0]
	require.Equal(t, []string{"failed", "running"}, f.Status)
	require.Equal(t, "c1", f.Cursor)
	require.Equal(t, map[string]string{"env": "prod"}, f.Labels)
	require.Equal(t, 10, f.Limit)
	require.True(t, f.Since.Equal(t0))

	running, ended, err := c.Cancel(ctx, "r-2")
	require.NoError(t, err)
	require.False(t, ended, "a running run is only signalled")
	require.Equal(t, "i-1", running.Owner.InstanceID)
	_, ended, err = c.Cancel(ctx, "r-1")
	require.NoError(t, err)
	require.True(t, ended)

	err = c.Delete(ctx, "r-2")
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "run_not_terminal", ae.Code)
	require.NoError(t, c.Delete(ctx, "r-1"))
	_, err = c.Get(ctx, "r-1")
	require.Error(t, err)

	cfg, err := c.Config(ctx, "r-2")
	require.NoError(t, err)
	require.Equal(t, "pipeline: {}\n", cfg)
}

func TestLogsAndFollow(t *testing.T) {
	t.Parallel()
	svc := newService()
	c := newClient(t, svc)
	ctx := context.Background()
	page, err := c.Logs(ctx, "r-2", 0, 0)
	require.NoError(t, err)
	require.Len(t, page.Lines, 1)
	require.Equal(t, int64(1), page.NextAfter)
	require.False(t, page.Done)
	require.Equal(t, map[string]any{"page": 1.0}, page.Lines[0].Attrs)

	var got []string
	status, err := c.FollowLogs(ctx, "r-2", page.NextAfter, func(l client.LogLine) error {
		got = append(got, l.Message)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, "running", status, "the fake run's status as the server saw it at the end")
	require.Equal(t, []string{"line 2", "line 3"}, got)

	_, err = c.FollowLogs(ctx, "missing", 0, func(client.LogLine) error { return nil })
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "not_found", ae.Code)
}

func TestFollowStopsOnCallbackError(t *testing.T) {
	t.Parallel()
	c := newClient(t, newService())
	stop := errors.New("enough")
	_, err := c.FollowLogs(context.Background(), "r-2", 0, func(client.LogLine) error { return stop })
	require.ErrorIs(t, err, stop)
}

func TestFollowStreamThatEndsEarly(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": hi\n\nid: 1\nevent: line\ndata: {\"seq\":1,\"at\":\"2026-01-01T00:00:00Z\",\"level\":\"INFO\",\"message\":\"a\"}\n\n")
	}))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, HTTP: srv.Client()}
	n := 0
	_, err := c.FollowLogs(context.Background(), "r", 0, func(client.LogLine) error { n++; return nil })
	require.ErrorIs(t, err, client.ErrStreamEnded)
	require.Equal(t, 1, n)
}

func TestFollowErrorEvent(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: error\ndata: {\"error\":{\"code\":\"history_unavailable\",\"message\":\"db down\"}}\n\n")
	}))
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, HTTP: srv.Client()}
	_, err := c.FollowLogs(context.Background(), "r", 0, func(client.LogLine) error { return nil })
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "history_unavailable", ae.Code)
}

func TestTransportAndShapeErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := (&client.Client{BaseURL: "not a url"}).Get(ctx, "x")
	require.ErrorContains(t, err, "is not a URL")

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	c := &client.Client{BaseURL: srv.URL, HTTP: srv.Client()}
	_, err = c.Get(ctx, "x")
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 502, ae.Status)
	require.Empty(t, ae.Code)
	require.Contains(t, ae.Error(), "bad gateway")
	srv.Close()

	_, err = (&client.Client{BaseURL: "http://user:pw@" + strings.TrimPrefix(srv.URL, "http://")}).Get(ctx, "x")
	require.ErrorContains(t, err, "cannot reach the server")
	require.NotContains(t, err.Error(), "pw")
}

func TestTokenIsSent(t *testing.T) {
	t.Parallel()
	srv := newServer(t, newService())
	_, err := (&client.Client{BaseURL: srv.URL, Token: "wrong", HTTP: srv.Client()}).Get(context.Background(), "r-1")
	var ae *client.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "unauthorized", ae.Code)
}

// TestDTOsMatchTheOpenAPIDocument keeps the client's JSON names equal to the server's
// published schemas.
func TestDTOsMatchTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	srv := newServer(t, newService())
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/v1/openapi.json", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	for schema, v := range map[string]any{
		"Run": client.RunResource{}, "Owner": client.Owner{}, "Stats": client.Stats{}, "RunError": client.RunError{},
		"ShardSummary": client.ShardSummary{}, "Attempt": client.Attempt{}, "TemplateRef": client.TemplateRef{},
		"SubmitRequest": client.SubmitRequest{}, "SubmitResponse": client.SubmitResponse{}, "Callback": client.Callback{},
		"ListResponse": client.ListResponse{}, "LogLine": client.LogLine{}, "LogsResponse": client.LogsResponse{},
		"ConfigResponse": client.ConfigResponse{}, "ErrorBody": client.ErrorBody{}, "ErrorPayload": client.ErrorPayload{},
		"LogStreamEnd":    client.StreamEnd{},
		"ScheduleRequest": client.ScheduleRequest{}, "Schedule": client.Schedule{}, "Tick": client.Tick{},
		"TicksResponse": client.TicksResponse{}, "BackfillRequest": client.BackfillRequest{},
		"BackfillRun": client.BackfillRun{}, "BackfillResponse": client.BackfillResponse{},
		"Shard": client.Shard{}, "KeyRange": client.KeyRange{}, "ShardsResponse": client.ShardsResponse{},
		"ChangeRequest": client.ChangeRequest{}, "ChangeRequestList": client.ChangeRequestList{},
		"AuditEntry": client.AuditEntry{}, "AuditResponse": client.AuditPage{}, "Readiness": client.Readiness{},
		"Cluster": client.ClusterState{}, "Member": client.Member{}, "Template": client.Template{},
		"TemplateParam": client.TemplateParam{}, "TemplateRequest": client.TemplateRequest{},
		"TemplateRunRequest": client.TemplateRunRequest{}, "FanoutRequest": client.FanoutRequest{},
		"FanoutEntry": client.FanoutRun{}, "FanoutResult": client.FanoutResult{},
	} {
		s, ok := doc.Components.Schemas[schema]
		require.True(t, ok, "the document has no schema %s", schema)
		require.Equal(t, slices.Sorted(maps.Keys(s.Properties)), jsonNames(reflect.TypeOf(v)), schema)
	}
}

func jsonNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestFollowOutlivesTheServersWriteTimeout runs the real handler behind a server with a
// short WriteTimeout: a followed stream must survive it.
func TestFollowOutlivesTheServersWriteTimeout(t *testing.T) {
	t.Parallel()
	svc := newService()
	h := sluicehttp.New(sluicehttp.Config{Auth: sluicehttp.AuthConfig{Token: token}, PollInterval: 60 * time.Millisecond},
		sluicehttp.Deps{Runs: svc})
	srv := httptest.NewUnstartedServer(h)
	srv.Config.WriteTimeout = 100 * time.Millisecond
	srv.Start()
	defer srv.Close()
	c := &client.Client{BaseURL: srv.URL, Token: token, HTTP: srv.Client()}
	n := 0
	start := time.Now()
	_, err := c.FollowLogs(context.Background(), "r-2", 0, func(client.LogLine) error { n++; return nil })
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Greater(t, time.Since(start), 150*time.Millisecond, "the stream lasted past the write timeout")
}
