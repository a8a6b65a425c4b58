package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

const runsToken = "cli-runs-token"

var runsT0 = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// runsService is a RunService fake: runs in memory; r-new's status advances along the
// script on each read of its logs (as a followed stream reads them), never on Get.
type runsService struct {
	mu        sync.Mutex
	recs      map[string]*runs.Record
	script    []string // statuses r-new goes through on successive log reads
	gets      int      // Gets of r-new
	logReads  int
	onLogs    func() // called on each read of r-new's logs
	submitted []runs.SubmitRequest
	filters   []runs.Filter
	cancelled []string
	submitErr error
}

func newRunsService() *runsService {
	return &runsService{recs: map[string]*runs.Record{
		"r-1": {ID: "r-1", Name: "orders", Status: "completed", Pool: "default", TriggerKind: "api", RunDate: "2026-05-06",
			RunKey: "day-1", Attempt: 1, MaxAttempts: 3, CreatedAt: runsT0, Labels: map[string]string{"env": "prod"},
			Stats: runs.Stats{RowsRead: 7, RowsWritten: 7, Pages: 1, ElapsedMS: 1500}},
		"r-2": {ID: "r-2", Name: "users", Status: "running", Pool: "gpu", TriggerKind: "cli", RunDate: "2026-05-06",
			RunKey: "day-2", CreatedAt: runsT0, Owner: "i-1", OwnerListen: "127.0.0.1:8080"},
		"r-3": {ID: "r-3", Name: "users", Status: "completed", Pool: "gpu", TriggerKind: "cli", RunDate: "2026-05-06",
			RunKey: "day-1", CreatedAt: runsT0},
	}}
}

func (s *runsService) Submit(_ context.Context, req runs.SubmitRequest) (runs.SubmitResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.submitErr != nil {
		return runs.SubmitResult{}, s.submitErr
	}
	s.submitted = append(s.submitted, req)
	if req.IdempotencyKey == "needs-approval" { // stands for a server with --require-approval run
		return runs.SubmitResult{ChangeRequestID: "cr-1", Status: "proposed"}, nil
	}
	s.recs["r-new"] = &runs.Record{ID: "r-new", Name: "new", Status: "pending", CreatedAt: runsT0,
		Stats: runs.Stats{RowsRead: 3, RowsWritten: 3, Pages: 1, ElapsedMS: 20}}
	return runs.SubmitResult{RunID: "r-new", Status: "pending", Replayed: req.IdempotencyKey == "seen"}, nil
}

func (s *runsService) Get(_ context.Context, _ runs.Principal, id string) (*runs.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[id]
	if !ok {
		return nil, fmt.Errorf("run %s: %w", id, run.ErrNotFound)
	}
	if id == "r-new" {
		s.gets++
	}
	cp := *r
	return &cp, nil
}

func (s *runsService) List(_ context.Context, _ runs.Principal, f runs.Filter) (runs.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filters = append(s.filters, f)
	var page runs.Page
	for _, id := range []string{"r-1", "r-2", "r-3"} {
		r := s.recs[id]
		if (f.RunKey == "" || r.RunKey == f.RunKey) && (f.Name == "" || r.Name == f.Name) {
			page.Runs = append(page.Runs, r)
		}
	}
	if f.RunKey == "" {
		page.NextCursor = "cursor-2"
	}
	return page, nil
}

func (s *runsService) Cancel(_ context.Context, _ runs.Principal, id string) (*runs.Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[id]
	if !ok {
		return nil, false, run.ErrNotFound
	}
	s.cancelled = append(s.cancelled, id)
	if r.Status == "running" {
		return r, false, nil
	}
	return r, true, nil
}

func (s *runsService) Delete(_ context.Context, _ runs.Principal, id string) error {
	if id != "r-1" {
		return runs.ErrRunNotTerminal
	}
	return nil
}

func (s *runsService) Rollback(context.Context, runs.Principal, string, []byte) (runs.SubmitResult, error) {
	return runs.SubmitResult{}, nil
}

func (s *runsService) Config(context.Context, runs.Principal, string) (string, error) { return "", nil }

// Shards answers an empty page: the client never lists shards.
func (s *runsService) Shards(context.Context, runs.Principal, string, string, int) (runs.ShardPage, error) {
	return runs.ShardPage{Shards: []runs.ShardRecord{}}, nil
}

// Follow accepts every follower: the log stream is what these tests read.
func (s *runsService) Follow(context.Context, runs.Principal, string) error { return nil }

func (s *runsService) Logs(_ context.Context, _ runs.Principal, id string, after int64, limit int) (runs.LogPage, error) {
	if id == "r-new" && len(s.script) > 0 {
		return s.advance(after), nil
	}
	var lines []runs.LogLine
	for seq := after + 1; seq <= 3 && len(lines) < min(limit, 2); seq++ {
		lines = append(lines, runs.LogLine{Seq: seq, At: runsT0, Level: "INFO", Message: fmt.Sprintf("step %d", seq),
			Attrs: map[string]any{"rows": seq}})
	}
	next := after
	if len(lines) > 0 {
		next = lines[len(lines)-1].Seq
	}
	return runs.LogPage{Lines: lines, Next: next, Done: next >= 3}, nil
}

// advance moves r-new one step along the script; its log is one line per step.
func (s *runsService) advance(after int64) runs.LogPage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.onLogs != nil {
		s.onLogs()
	}
	r := s.recs["r-new"]
	r.Status = s.script[min(s.logReads, len(s.script)-1)]
	s.logReads++
	if r.Status == "failed" {
		r.ErrorCode, r.ErrorMessage = "pipeline_error", "sink sqlite: page 1: disk full"
	}
	seq := int64(s.logReads)
	line := runs.LogLine{Seq: seq, At: runsT0, Level: "INFO", Message: "status " + r.Status}
	done := r.Status == "completed" || r.Status == "failed" || r.Status == "cancelled"
	if seq <= after {
		return runs.LogPage{Next: after, Done: done}
	}
	return runs.LogPage{Lines: []runs.LogLine{line}, Next: seq, Done: done}
}

func (s *runsService) Audit(context.Context, runs.Principal, int64, int) ([]runs.AuditEntry, error) {
	return nil, nil
}

type runsHarness struct {
	svc     *runsService
	srv     *httptest.Server
	dataDir string
}

func newRunsHarness(t *testing.T) *runsHarness {
	t.Helper()
	h := &runsHarness{svc: newRunsService(), dataDir: t.TempDir()}
	h.srv = httptest.NewServer(sluicehttp.New(sluicehttp.Config{Auth: sluicehttp.AuthConfig{Token: runsToken},
		PollInterval: 5 * time.Millisecond}, sluicehttp.Deps{Runs: h.svc}))
	t.Cleanup(h.srv.Close)
	require.NoError(t, os.WriteFile(filepath.Join(h.dataDir, cli.TokenFile), []byte(runsToken+"\n"), 0o600))
	return h
}

// exec runs `sluice runs …` against the harness server; env adds SLUICE_* variables.
func (h *runsHarness) exec(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	root := cli.NewRoot(cli.Info{Version: "test"})
	root.AddCommand(cli.NewRunsCommand(cli.RunsDeps{HTTP: h.srv.Client()}))
	vars := map[string]string{"SLUICE_SERVER": h.srv.URL, "SLUICE_DATA_DIR": h.dataDir}
	for k, v := range env {
		vars[k] = v
	}
	var stdout, stderr bytes.Buffer
	code := cli.Execute(context.Background(), root, append([]string{"runs"}, args...), cli.Env{
		Lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		Stdin:  strings.NewReader("pipeline: {from: stdin}\n"), Stdout: &stdout, Stderr: &stderr,
	})
	return code, stdout.String(), stderr.String()
}

func runsConfigFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(p, []byte("pipeline:\n  name: x\n"), 0o600))
	return p
}

func TestRunsSubmit(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	code, out, stderr := h.exec(t, nil, "submit", runsConfigFile(t), "--name", "n", "--pool", "gpu", "--label", "a=1",
		"--label", "b=2", "--idempotency-key", "k", "--run-key", "rk", "--timeout-secs", "30")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "submitted run r-new (pending)\n", out)
	got := h.svc.submitted[0]
	require.Equal(t, "pipeline:\n  name: x\n", string(got.Config))
	require.Equal(t, "n", got.Name)
	require.Equal(t, "gpu", got.Pool)
	require.Equal(t, map[string]string{"a": "1", "b": "2"}, got.Labels)
	require.Equal(t, "k", got.IdempotencyKey)
	require.Equal(t, "rk", got.RunKey)
	require.Equal(t, 30, got.TimeoutSecs)
	require.Equal(t, "api", got.TriggerKind, "the REST route stamps its trigger")

	code, out, _ = h.exec(t, nil, "submit", "-", "--idempotency-key", "seen", "--json")
	require.Equal(t, 0, code)
	require.JSONEq(t, `{"run_id": "r-new", "status": "pending", "replayed": true}`, out)
	require.Equal(t, "pipeline: {from: stdin}\n", string(h.svc.submitted[1].Config))
}

func TestRunsSubmitWait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		final  string
		code   int
		stdout string
		stderr string
	}{
		{"completed", 0, "completed: run r-new: 3 rows read, 3 written, 1 pages, 20ms\n", ""},
		{"failed", 1, "", "failed: run r-new: sink sqlite: page 1: disk full [pipeline_error;"},
		{"cancelled", 1, "", "cancelled: run r-new"},
	} {
		h := newRunsHarness(t)
		h.svc.script = []string{"pending", "running", "running", tc.final}
		code, out, stderr := h.exec(t, nil, "submit", runsConfigFile(t), "--wait")
		require.Equal(t, tc.code, code, tc.final+": "+stderr)
		require.Equal(t, tc.stdout, out, tc.final)
		require.Contains(t, stderr, "submitted run r-new (pending); waiting for it to end")
		require.Contains(t, stderr, tc.stderr)
		require.Equal(t, 4, h.svc.logReads, "followed the log stream until the run ended")
		require.LessOrEqual(t, h.svc.gets, 2, "the stream tells the end; the run is read once for its outcome, never polled")
	}
	h := newRunsHarness(t)
	h.svc.script = []string{"running", "completed"}
	code, out, _ := h.exec(t, nil, "submit", runsConfigFile(t), "--wait", "--json")
	require.Equal(t, 0, code)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, "completed", r["status"])
}

func TestRunsSubmitRefusedConfigExits2(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	h.svc.submitErr = pipeline.Errors{
		{Path: "pipeline.source.type", Pos: pipeline.Pos{Line: 3, Column: 5}, Message: "unknown source type"},
		{Path: "pipeline.name", Message: "required"},
	}
	code, _, stderr := h.exec(t, nil, "submit", runsConfigFile(t))
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "error: pipeline.source.type: unknown source type (line 3, column 5)\n")
	require.Contains(t, stderr, "error: pipeline.name: required\n")
}

func TestRunsUsageErrors(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	for _, args := range [][]string{
		{"submit", runsConfigFile(t), "--label", "oops"},
		{"submit", runsConfigFile(t), "--timeout-secs", "-1"},
		{"submit", "/no/such/file.yaml"},
		{"submit"},
		{"list", "--limit", "0"},
		{"list", "--server", "ftp://x"},
		{"cancel"},
		{"cancel", "r-1", "--run-key", "k"},
		{"get"},
	} {
		code, _, stderr := h.exec(t, nil, args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
	}
	require.Empty(t, h.svc.submitted)
}

func TestRunsTokenSources(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	code, _, stderr := h.exec(t, map[string]string{"SLUICE_DATA_DIR": t.TempDir()}, "get", "r-1")
	require.Equal(t, 1, code, "no token file, no token")
	require.Contains(t, stderr, "unauthorized")
	require.Contains(t, stderr, "hint: pass --token")

	code, _, stderr = h.exec(t, map[string]string{"SLUICE_DATA_DIR": t.TempDir(), "SLUICE_TOKEN": runsToken}, "get", "r-1")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = h.exec(t, map[string]string{"SLUICE_DATA_DIR": t.TempDir()}, "get", "r-1", "--token", runsToken)
	require.Equal(t, 0, code, stderr)
	code, _, _ = h.exec(t, map[string]string{"SLUICE_TOKEN": "wrong"}, "get", "r-1")
	require.Equal(t, 1, code, "an explicit token wins over the file")
}

func TestRunsUnreachableServer(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	code, _, stderr := h.exec(t, map[string]string{"SLUICE_SERVER": "http://127.0.0.1:1"}, "list")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "cannot reach the server at http://127.0.0.1:1")
}

func TestRunsList(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	code, out, stderr := h.exec(t, nil, "list", "--status", "completed,running", "--name", "orders", "--pool", "gpu",
		"--label", "env=prod", "--limit", "3", "--cursor", "c1")
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	require.Regexp(t, `^RUN ID\s+NAME\s+STATUS\s+POOL\s+CREATED\s+ROWS WRITTEN$`, lines[0])
	require.Regexp(t, `^r-1\s+orders\s+completed\s+default\s+2026-05-06T07:08:09Z\s+7$`, lines[1])
	require.Contains(t, stderr, "more runs: add --cursor cursor-2")
	f := h.svc.filters[0]
	require.Equal(t, []string{"completed", "running"}, f.Status)
	require.Equal(t, "gpu", f.Pool)
	require.Equal(t, map[string]string{"env": "prod"}, f.Labels)
	require.Equal(t, 3, f.Limit)
	require.Equal(t, "c1", f.Cursor)

	code, out, _ = h.exec(t, nil, "list", "--json")
	require.Equal(t, 0, code)
	var page map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &page))
	require.Len(t, page["runs"], 3)
	require.Equal(t, "cursor-2", page["next_cursor"])
}

func TestRunsGet(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	code, out, _ := h.exec(t, nil, "get", "r-1")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^run id:\s+r-1$`, out)
	require.Regexp(t, `(?m)^status:\s+completed$`, out)
	require.Regexp(t, `(?m)^labels:\s+env=prod$`, out)
	require.Regexp(t, `(?m)^stats:\s+7 rows read, 7 written, 1 pages, 1.5s$`, out)

	code, out, _ = h.exec(t, nil, "get", "r-2", "--json")
	require.Equal(t, 0, code)
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, map[string]any{"instance_id": "i-1", "listen": "127.0.0.1:8080"}, r["owner"])

	code, _, stderr := h.exec(t, nil, "get", "r-404")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "error: get run r-404: not_found: ")
}

func TestRunsCancel(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	code, out, _ := h.exec(t, nil, "cancel", "r-1")
	require.Equal(t, 0, code)
	require.Equal(t, "run r-1 is completed\n", out)
	code, out, _ = h.exec(t, nil, "cancel", "r-2")
	require.Equal(t, 0, code)
	require.Equal(t, "cancel requested: run r-2 stops at its next page boundary\n", out)

	code, _, _ = h.exec(t, nil, "cancel", "--run-key", "day-2")
	require.Equal(t, 0, code)
	require.Equal(t, []string{"r-1", "r-2", "r-2"}, h.svc.cancelled)

	code, _, stderr := h.exec(t, nil, "cancel", "--run-key", "day-1")
	require.Equal(t, 2, code, "the key is used by two pipelines")
	require.Contains(t, stderr, "r-1 (orders), r-3 (users)")
	require.Contains(t, stderr, "add --name")
	code, _, _ = h.exec(t, nil, "cancel", "--run-key", "day-1", "--name", "users")
	require.Equal(t, 0, code)
	require.Equal(t, "r-3", h.svc.cancelled[3])

	code, _, stderr = h.exec(t, nil, "cancel", "--run-key", "nope")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `no run has run key "nope"`)
}

func TestRunsLogs(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	code, out, _ := h.exec(t, nil, "logs", "r-1")
	require.Equal(t, 0, code)
	require.Equal(t, "2026-05-06T07:08:09Z INFO step 1 rows=1\n2026-05-06T07:08:09Z INFO step 2 rows=2\n"+
		"2026-05-06T07:08:09Z INFO step 3 rows=3\n", out, "every page is read")

	code, out, stderr := h.exec(t, nil, "logs", "r-1", "-f")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 3, strings.Count(out, "\n"))
	require.Contains(t, stderr, "run r-1 ended: completed")

	code, out, _ = h.exec(t, nil, "logs", "r-1", "--json")
	require.Equal(t, 0, code)
	first := strings.SplitN(out, "\n", 2)[0]
	require.JSONEq(t, `{"seq": 1, "at": "2026-05-06T07:08:09Z", "level": "INFO", "message": "step 1", "attrs": {"rows": 1}}`, first)
}

func TestRunsDelete(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	code, out, _ := h.exec(t, nil, "delete", "r-1")
	require.Equal(t, 0, code)
	require.Equal(t, "deleted run r-1\n", out)
	code, _, stderr := h.exec(t, nil, "delete", "r-2")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "run_not_terminal")
}

func TestRunsHelpNamesEnvironment(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	code, out, _ := h.exec(t, nil, "list", "--help")
	require.Equal(t, 0, code)
	require.Contains(t, out, "$SLUICE_SERVER")
	require.Contains(t, out, "$SLUICE_TOKEN")
	require.Contains(t, out, "http://127.0.0.1:8080")
	require.NotContains(t, out, "$SLUICE_POOL", "a filter never reads the environment")
	require.NotContains(t, out, "$SLUICE_STATUS")
}

func TestRunsSubmitUnderApprovalPrintsTheChangeRequest(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	code, out, stderr := h.exec(t, nil, "submit", runsConfigFile(t), "--idempotency-key", "needs-approval", "--wait")
	require.Equal(t, cli.ExitProposed, code, "a proposed run is neither completed nor failed: exit 3\n"+stderr)
	require.Equal(t, "proposed change request cr-1: it runs once another operator approves it "+
		"(see `sluice change-requests get cr-1`)\n", out, "there is no run to wait for yet")
	code, out, stderr = h.exec(t, nil, "submit", runsConfigFile(t), "--idempotency-key", "needs-approval", "--json")
	require.Equal(t, cli.ExitProposed, code, "without --wait too: nothing runs until someone approves\n"+stderr)
	require.JSONEq(t, `{"change_request_id": "cr-1", "status": "proposed"}`, out)
}
