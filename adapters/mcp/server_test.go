package mcp_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/adapters/mcp"
	"github.com/sluicehq/sluice/application/runs"
)

// fakeRuns answers with canned values; err, when set, fails every call.
type fakeRuns struct {
	err  error
	logs runs.LogPage
}

func (f fakeRuns) Submit(context.Context, runs.SubmitRequest) (runs.SubmitResult, error) {
	return runs.SubmitResult{}, f.err
}

func (f fakeRuns) Get(_ context.Context, _ runs.Principal, id string) (*runs.Record, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &runs.Record{ID: id, Status: "failed", ErrorCode: "pipeline_error",
		ErrorMessage: "connect postgres://app:hunter22@db/wh: refused"}, nil
}

func (f fakeRuns) List(context.Context, runs.Principal, runs.Filter) (runs.Page, error) {
	return runs.Page{}, f.err
}

func (f fakeRuns) Cancel(context.Context, runs.Principal, string) (*runs.Record, bool, error) {
	return nil, false, f.err
}

func (f fakeRuns) Logs(context.Context, runs.Principal, string, int64, int) (runs.LogPage, error) {
	return f.logs, f.err
}

func (f fakeRuns) Validate(context.Context, runs.Principal, []byte, map[string]string, string) ([]string, error) {
	return nil, f.err
}

func session(t *testing.T, svc mcp.RunService, p runs.Principal) *sdk.ClientSession {
	t.Helper()
	return sessionWith(t, mcp.Deps{Runs: svc, Errors: sluicehttp.Classify, Redact: sluicehttp.Redact}, p)
}

// sessionWith connects a client to a server built from deps, as principal p.
func sessionWith(t *testing.T, deps mcp.Deps, p runs.Principal) *sdk.ClientSession {
	t.Helper()
	s := mcp.New(mcp.Config{}, deps)
	srv := httptest.NewServer(s.For(p))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func text(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	return res.Content[0].(*sdk.TextContent).Text, res.IsError
}

func TestUnknownErrorsLeakNothing(t *testing.T) {
	t.Parallel()
	cs := session(t, fakeRuns{err: errors.New("driver: password=hunter22 rejected")}, runs.Principal{Name: "v", Role: runs.Viewer})
	got, isErr := text(t, cs, "get_run", map[string]any{"run_id": "r-1"})
	require.True(t, isErr)
	require.Contains(t, got, `"code":"internal"`)
	require.NotContains(t, got, "hunter22")
}

func TestShownTextIsRedacted(t *testing.T) {
	t.Parallel()
	logs := runs.LogPage{Lines: []runs.LogLine{{Seq: 1, Level: "INFO", Message: "opened postgres://app:hunter22@db/wh"}}, Next: 1, Done: true}
	cs := session(t, fakeRuns{logs: logs}, runs.Principal{Name: "v", Role: runs.Viewer})
	got, isErr := text(t, cs, "get_run", map[string]any{"run_id": "r-1"})
	require.False(t, isErr)
	require.NotContains(t, got, "hunter22")
	require.Contains(t, got, `"terminal":true`)
	got, isErr = text(t, cs, "get_run_logs", map[string]any{"run_id": "r-1"})
	require.False(t, isErr)
	require.NotContains(t, got, "hunter22")
	require.True(t, strings.Contains(got, "postgres://"), got)
}

func TestTenantAndRolelessPrincipalsGetNoMutatingTools(t *testing.T) {
	t.Parallel()
	for _, p := range []runs.Principal{{Name: "t", Role: runs.Admin, Tenant: "acme"}, {Name: "n"}} {
		s := mcp.New(mcp.Config{AllowMutations: true}, mcp.Deps{Runs: fakeRuns{}, Errors: sluicehttp.Classify})
		srv := httptest.NewServer(s.For(p))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
		require.NoError(t, err)
		res, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		for _, tool := range res.Tools {
			require.NotContains(t, []string{"run_pipeline", "run_template", "cancel_run", "propose_run"}, tool.Name, p.Name)
		}
		_ = cs.Close()
		cancel()
		srv.Close()
	}
}
