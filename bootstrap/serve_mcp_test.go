package bootstrap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

const (
	mcpViewerToken   = "viewer-token-0001"
	mcpOperatorToken = "operator-token-0001"
	mcpAdminToken    = "admin-token-0001"
)

// startMCPServer serves --mcp with a viewer, an operator and an admin principal.
func startMCPServer(t *testing.T, args ...string) *server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "auth.yaml")
	require.NoError(t, os.WriteFile(path, []byte(
		"- {name: vera, token: "+mcpViewerToken+", role: viewer}\n"+
			"- {name: otto, token: "+mcpOperatorToken+", role: operator}\n"+
			"- {name: ada, token: "+mcpAdminToken+", role: admin}\n"), 0o600))
	return startServer(t, nil, append([]string{"--history", "memory", "--auth-config", path, "--mcp",
		"--cluster-poll-secs", "1", "--lease-ttl-secs", "3"}, args...)...)
}

// bearer adds the token to every request of the SDK's client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the SDK's own client over streamable HTTP.
func mcpSession(t *testing.T, s *server, token string) (*sdk.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "sluice-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://" + s.addr + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token}}, DisableStandaloneSSE: true}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// call runs a tool and decodes its JSON text; isError tells a refused call.
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (out map[string]any, isError bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.NotEmpty(t, res.Content)
	text, ok := res.Content[0].(*sdk.TextContent)
	require.True(t, ok, "tool answers are JSON text")
	require.NoError(t, json.Unmarshal([]byte(text.Text), &out), text.Text)
	return out, res.IsError
}

var readTools = []string{"cluster_status", "get_change_request", "get_run", "get_run_logs", "get_template",
	"list_change_requests", "list_connectors", "list_runs", "list_templates", "validate_config"}

func TestMCPToolsDependOnRoleAndFlag(t *testing.T) {
	t.Parallel()
	withMutations := startMCPServer(t, "--mcp-allow-mutations")
	readOnly := startMCPServer(t)
	all := slices.Sorted(slices.Values(append(slices.Clone(readTools), "cancel_run", "propose_run", "run_pipeline", "run_template")))
	// propose_run needs only the operator role: nothing runs until a person approves.
	propose := slices.Sorted(slices.Values(append(slices.Clone(readTools), "propose_run")))
	cases := []struct {
		name  string
		s     *server
		token string
		want  []string
	}{
		{"viewer with the flag", withMutations, mcpViewerToken, readTools},
		{"operator with the flag", withMutations, mcpOperatorToken, all},
		{"admin with the flag", withMutations, mcpAdminToken, all},
		{"operator without the flag", readOnly, mcpOperatorToken, propose},
		{"admin without the flag", readOnly, mcpAdminToken, propose},
	}
	for _, tc := range cases {
		cs, err := mcpSession(t, tc.s, tc.token)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, toolNames(t, cs), tc.name)
	}
	// A viewer calling a hidden tool is refused by name, as the tool does not exist for it.
	cs, err := mcpSession(t, withMutations, mcpViewerToken)
	require.NoError(t, err)
	_, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "run_pipeline",
		Arguments: map[string]any{"config": tinyConfig(1)}})
	require.ErrorContains(t, err, "run_pipeline")
}

func TestMCPRefusesUnauthenticatedClients(t *testing.T) {
	t.Parallel()
	s := startMCPServer(t)
	for _, token := range []string{"", "not-a-token"} {
		_, err := mcpSession(t, s, token)
		require.Error(t, err, "token %q", token)
		require.Contains(t, err.Error(), "Unauthorized", "token %q", token)
	}
	code, body := s.do(t, http.MethodPost, "/mcp", "", `{}`)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Equal(t, "unauthorized", body["error"].(map[string]any)["code"])
}

func TestMCPWithoutTheFlagHasNoRoute(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil, "--history", "memory", "--auth-token", mcpAdminToken)
	code, _ := s.do(t, http.MethodPost, "/mcp", mcpAdminToken, `{}`)
	require.Equal(t, http.StatusNotFound, code)
}

func tinyConfig(count int) string {
	return "version: 1\nname: tiny\npipeline:\n  source: {type: generate, config: {count: " +
		strings.TrimSpace(jsonNumber(count)) + "}}\n  sink: {type: stdout}\n"
}

func jsonNumber(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestMCPRunsAPipelineToCompletion(t *testing.T) {
	t.Parallel()
	s := startMCPServer(t, "--mcp-allow-mutations")
	cs, err := mcpSession(t, s, mcpOperatorToken)
	require.NoError(t, err)

	valid, isErr := call(t, cs, "validate_config", map[string]any{"config": tinyConfig(3)})
	require.False(t, isErr)
	require.Equal(t, true, valid["valid"])

	started, isErr := call(t, cs, "run_pipeline", map[string]any{"config": tinyConfig(3), "labels": map[string]any{"by": "agent"}})
	require.False(t, isErr, started)
	id := started["run_id"].(string)
	require.NotEmpty(t, id)

	var run map[string]any
	require.Eventually(t, func() bool {
		got, isErr := call(t, cs, "get_run", map[string]any{"run_id": id})
		require.False(t, isErr, got)
		run = got["run"].(map[string]any)
		return got["terminal"] == true
	}, 20*time.Second, 50*time.Millisecond)
	require.Equal(t, "completed", run["status"], run)
	require.Equal(t, "mcp", run["trigger_kind"])
	require.Equal(t, float64(3), run["stats"].(map[string]any)["rows_written"])

	// The run is the same one REST shows, with the same trigger kind.
	code, rest := s.do(t, http.MethodGet, "/v1/runs/"+id, mcpViewerToken, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "mcp", rest["trigger_kind"])

	listed, isErr := call(t, cs, "list_runs", map[string]any{"labels": map[string]any{"by": "agent"}})
	require.False(t, isErr)
	require.Len(t, listed["runs"], 1)

	logs, isErr := call(t, cs, "get_run_logs", map[string]any{"run_id": id})
	require.False(t, isErr, logs)
	require.Equal(t, true, logs["done"])

	status, isErr := call(t, cs, "cluster_status", nil)
	require.False(t, isErr, status)
	require.Equal(t, []any{"default"}, status["pools"])
	require.Len(t, status["members"], 1)

	connectors, isErr := call(t, cs, "list_connectors", nil)
	require.False(t, isErr)
	require.NotEmpty(t, connectors["connectors"])
}

func TestMCPCancelsARun(t *testing.T) {
	t.Parallel()
	s := startMCPServer(t, "--mcp-allow-mutations")
	cs, err := mcpSession(t, s, mcpOperatorToken)
	require.NoError(t, err)
	slow := "version: 1\nname: slow\npipeline:\n  source: {type: generate, config: {count: 1000000, rate: 100, batch_size: 10}}\n  sink: {type: stdout}\n"
	started, isErr := call(t, cs, "run_pipeline", map[string]any{"config": slow})
	require.False(t, isErr, started)
	id := started["run_id"].(string)

	cancelled, isErr := call(t, cs, "cancel_run", map[string]any{"run_id": id})
	require.False(t, isErr, cancelled)
	require.Eventually(t, func() bool {
		got, _ := call(t, cs, "get_run", map[string]any{"run_id": id})
		return got["run"].(map[string]any)["status"] == "cancelled"
	}, 20*time.Second, 50*time.Millisecond)

	// An unknown run answers REST's not_found.
	missing, isErr := call(t, cs, "get_run", map[string]any{"run_id": "no-such-run"})
	require.True(t, isErr)
	require.Equal(t, "not_found", missing["error"].(map[string]any)["code"])
}

// TestMCPBadConfigReadsLikeREST compares an invalid config's answer over MCP with the
// REST answer to the same submission: same code, message and field errors.
func TestMCPBadConfigReadsLikeREST(t *testing.T) {
	t.Parallel()
	s := startMCPServer(t, "--mcp-allow-mutations")
	cs, err := mcpSession(t, s, mcpOperatorToken)
	require.NoError(t, err)
	bad := "version: 1\nname: bad\npipeline:\n  source: {type: generate, config: {count: -1}}\n  sink: {type: nowhere}\n"

	body, err := json.Marshal(map[string]any{"config": bad})
	require.NoError(t, err)
	code, rest := s.do(t, http.MethodPost, "/v1/runs", mcpOperatorToken, string(body))
	require.Equal(t, http.StatusUnprocessableEntity, code)
	restErr := rest["error"].(map[string]any)
	require.Equal(t, "invalid_config", restErr["code"])

	got, isErr := call(t, cs, "run_pipeline", map[string]any{"config": bad})
	require.True(t, isErr)
	// The REST body also names its request (X-Request-Id); an MCP tool call is not one.
	require.NotEmpty(t, restErr["request_id"])
	delete(restErr, "request_id")
	require.Equal(t, restErr, got["error"], "the tool error is the REST error body")

	valid, isErr := call(t, cs, "validate_config", map[string]any{"config": bad})
	require.False(t, isErr, "an invalid config is an answer, not a failed call")
	require.Equal(t, false, valid["valid"])
	require.Equal(t, "invalid_config", valid["code"])
	var paths []string
	for _, e := range valid["errors"].([]any) {
		paths = append(paths, e.(map[string]any)["path"].(string))
	}
	var restPaths []string
	for _, e := range restErr["details"].(map[string]any)["errors"].([]any) {
		restPaths = append(restPaths, e.(map[string]any)["path"].(string))
	}
	require.NotEmpty(t, restPaths)
	require.Equal(t, restPaths, paths)

	// The 18 KB of lists nested 9,000 deep is refused from its text (SPEC §14.3).
	deep := "version: 1\nname: deep\npipeline: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n"
	valid, isErr = call(t, cs, "validate_config", map[string]any{"config": deep})
	require.False(t, isErr)
	require.Equal(t, false, valid["valid"])
	require.Contains(t, fmt.Sprint(valid["errors"]), "nests deeper than 64 levels")
}

func TestServeRefusesMutationsWithoutMCP(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := run(t, nil, "serve", "--history", "memory", "--no-auth", "--mcp-allow-mutations")
	require.Equal(t, 2, code, stderr)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "--mcp-allow-mutations")
	require.Contains(t, stderr, "--mcp")
}

func TestMCPRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "auth.yaml")
	require.NoError(t, os.WriteFile(path, []byte("- {name: otto, token: "+mcpOperatorToken+", role: operator}\n"+
		"- {name: acme-bot, token: tenant-token-0001, role: operator, tenant: acme}\n"), 0o600))
	s := startServer(t, nil, "--history", "memory", "--auth-config", path, "--mcp", "--mcp-allow-mutations")

	// Tenant principals have only their tenant routes (SPEC §2.2), so not /mcp.
	_, err := mcpSession(t, s, "tenant-token-0001")
	require.ErrorContains(t, err, "Forbidden")

	cs, err := mcpSession(t, s, mcpOperatorToken)
	require.NoError(t, err)
	cases := []struct {
		tool string
		args map[string]any
		code string
		want string
	}{
		{"list_runs", map[string]any{"limit": 501}, "invalid_body", "limit"},
		{"get_run_logs", map[string]any{"run_id": "x", "limit": 5001}, "invalid_body", "limit"},
		{"run_pipeline", map[string]any{"config": tinyConfig(1), "pool": "gpu"}, "pool_unserved", "gpu"},
		{"run_template", map[string]any{"template_id": "missing"}, "not_found", "missing"},
		{"cancel_run", map[string]any{"run_id": "missing"}, "not_found", "missing"},
		{"get_template", map[string]any{"template_id": "missing"}, "not_found", "missing"},
	}
	for _, tc := range cases {
		got, isErr := call(t, cs, tc.tool, tc.args)
		require.True(t, isErr, "%s %v", tc.tool, tc.args)
		e := got["error"].(map[string]any)
		require.Equal(t, tc.code, e["code"], "%s %v: %v", tc.tool, tc.args, e)
		require.Contains(t, e["message"], tc.want, "%s %v", tc.tool, tc.args)
	}
	// Arguments of the wrong type are refused by the schema before any use-case runs.
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "get_run", Arguments: map[string]any{"run_id": 7}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	// A status outside the enum is refused by the schema too, naming the allowed values.
	res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_runs",
		Arguments: map[string]any{"status": []any{"bogus"}}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, res.Content[0].(*sdk.TextContent).Text, "completed")
}
