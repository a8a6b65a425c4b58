package bootstrap_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const secondOperatorToken = "operator-token-0002"

// startApprovalServer serves --require-approval run with two operators, an admin and a
// viewer, plus MCP.
func startApprovalServer(t *testing.T) *server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "auth.yaml")
	require.NoError(t, os.WriteFile(path, []byte(
		"- {name: vera, token: "+mcpViewerToken+", role: viewer}\n"+
			"- {name: otto, token: "+mcpOperatorToken+", role: operator}\n"+
			"- {name: olga, token: "+secondOperatorToken+", role: operator}\n"+
			"- {name: ada, token: "+mcpAdminToken+", role: admin}\n"), 0o600))
	return startServer(t, nil, "--history", "memory", "--auth-config", path, "--require-approval", "run",
		"--mcp", "--cluster-poll-secs", "1", "--lease-ttl-secs", "3")
}

func TestRequireApprovalEndToEnd(t *testing.T) {
	t.Parallel()
	s := startApprovalServer(t)
	body, err := json.Marshal(map[string]any{"config": tinyConfig(2), "pool": "default"})
	require.NoError(t, err)

	code, proposed := s.do(t, http.MethodPost, "/v1/runs", mcpOperatorToken, string(body))
	require.Equal(t, http.StatusAccepted, code, proposed)
	require.Equal(t, "proposed", proposed["status"])
	id, _ := proposed["change_request_id"].(string)
	require.NotEmpty(t, id)
	require.NotContains(t, proposed, "run_id")

	code, runsPage := s.do(t, http.MethodGet, "/v1/runs", mcpViewerToken, "")
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, runsPage["runs"], "nothing runs before approval")

	code, list := s.do(t, http.MethodGet, "/v1/change-requests?status=proposed", mcpViewerToken, "")
	require.Equal(t, http.StatusOK, code, list)
	crs := list["change_requests"].([]any)
	require.Len(t, crs, 1)
	cr := crs[0].(map[string]any)
	require.Equal(t, id, cr["id"])
	require.Equal(t, "otto", cr["proposer"])
	require.Equal(t, "tiny", cr["name"])
	require.NotContains(t, cr, "request", "the request itself is never shown")

	// Refusals: the proposer, a viewer, an unknown id, a bad filter.
	code, refused := s.do(t, http.MethodPost, "/v1/change-requests/"+id+"/approve", mcpOperatorToken, "")
	require.Equal(t, http.StatusForbidden, code, refused)
	require.Contains(t, refused["error"].(map[string]any)["message"], "another operator or admin")
	code, _ = s.do(t, http.MethodPost, "/v1/change-requests/"+id+"/approve", mcpViewerToken, "")
	require.Equal(t, http.StatusForbidden, code)
	code, _ = s.do(t, http.MethodPost, "/v1/change-requests/missing/approve", secondOperatorToken, "")
	require.Equal(t, http.StatusNotFound, code)
	code, _ = s.do(t, http.MethodGet, "/v1/change-requests?status=pending", mcpViewerToken, "")
	require.Equal(t, http.StatusBadRequest, code)

	code, approved := s.do(t, http.MethodPost, "/v1/change-requests/"+id+"/approve", secondOperatorToken, "")
	require.Equal(t, http.StatusOK, code, approved)
	require.Equal(t, "approved", approved["status"])
	require.Equal(t, "olga", approved["decided_by"])
	runID, _ := approved["run_id"].(string)
	require.NotEmpty(t, runID)

	code, again := s.do(t, http.MethodPost, "/v1/change-requests/"+id+"/reject", secondOperatorToken, "")
	require.Equal(t, http.StatusConflict, code, again)

	require.Eventually(t, func() bool {
		_, run := s.do(t, http.MethodGet, "/v1/runs/"+runID, mcpViewerToken, "")
		return run["status"] == "completed"
	}, 20*time.Second, 50*time.Millisecond)
	_, run := s.do(t, http.MethodGet, "/v1/runs/"+runID, mcpViewerToken, "")
	require.Equal(t, "approval", run["trigger_kind"])
	require.Equal(t, "default", run["pool"])

	// A rejected request never runs.
	_, second := s.do(t, http.MethodPost, "/v1/runs", mcpOperatorToken, string(body))
	code, rejected := s.do(t, http.MethodPost, "/v1/change-requests/"+second["change_request_id"].(string)+"/reject",
		secondOperatorToken, "")
	require.Equal(t, http.StatusOK, code, rejected)
	require.Equal(t, "rejected", rejected["status"])
	require.Nil(t, rejected["run_id"])

	code, audit := s.do(t, http.MethodGet, "/v1/audit", mcpAdminToken, "")
	require.Equal(t, http.StatusOK, code, audit)
	actions := map[string]string{}
	for _, e := range audit["entries"].([]any) {
		entry := e.(map[string]any)
		actions[entry["action"].(string)] = entry["actor"].(string)
	}
	require.Equal(t, "otto", actions["change_request.proposed"])
	require.Equal(t, "olga", actions["change_request.approved"])
	require.Equal(t, "olga", actions["change_request.rejected"])
}

func TestMCPProposeRunMakesAChangeRequest(t *testing.T) {
	t.Parallel()
	s := startApprovalServer(t)
	cs, err := mcpSession(t, s, mcpOperatorToken)
	require.NoError(t, err)
	require.Contains(t, toolNames(t, cs), "propose_run")
	require.NotContains(t, toolNames(t, cs), "run_pipeline", "mutations were not allowed")

	got, isErr := call(t, cs, "propose_run", map[string]any{"config": tinyConfig(1)})
	require.False(t, isErr, got)
	require.Equal(t, "proposed", got["status"])
	id := got["change_request_id"].(string)

	code, list := s.do(t, http.MethodGet, "/v1/change-requests", mcpViewerToken, "")
	require.Equal(t, http.StatusOK, code)
	cr := list["change_requests"].([]any)[0].(map[string]any)
	require.Equal(t, id, cr["id"])
	require.Equal(t, "mcp", cr["trigger_kind"])

	// A bad config is refused at once, with the REST code, and no change request is made.
	bad, isErr := call(t, cs, "propose_run", map[string]any{"config": "version: 1\nname: x\npipeline: {}\n"})
	require.True(t, isErr)
	require.Equal(t, "invalid_config", bad["error"].(map[string]any)["code"])

	viewer, err := mcpSession(t, s, mcpViewerToken)
	require.NoError(t, err)
	require.NotContains(t, toolNames(t, viewer), "propose_run")
}

func TestServeRefusesApprovalWithoutTwoDeciders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := filepath.Join(dir, "one.yaml")
	require.NoError(t, os.WriteFile(one, []byte("- {name: otto, token: "+mcpOperatorToken+", role: operator}\n"+
		"- {name: vera, token: "+mcpViewerToken+", role: viewer}\n"), 0o600))
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no auth config", []string{"--auth-token", mcpAdminToken, "--require-approval", "run"}, "two"},
		{"one operator", []string{"--auth-config", one, "--require-approval", "run"}, "found 1"},
		{"bad value", []string{"--no-auth", "--require-approval", "always"}, `"always"`},
	}
	for _, tc := range cases {
		code, stdout, stderr := run(t, nil, append([]string{"serve", "--history", "memory"}, tc.args...)...)
		require.Equal(t, 2, code, "%s: %s", tc.name, stderr)
		require.Empty(t, stdout)
		require.Contains(t, stderr, "--require-approval", tc.name)
		require.Contains(t, stderr, tc.want, tc.name)
		require.NotContains(t, stderr, mcpOperatorToken)
	}
}
