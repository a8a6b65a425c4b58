package bootstrap_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/require"
)

// Every tool an agent can see describes every parameter, lists closed sets as enums and
// carries the MCP hints (read-only, destructive, idempotent, open world).
func TestMCPToolSchemasAndAnnotations(t *testing.T) {
	t.Parallel()
	s := startMCPServer(t, "--mcp-allow-mutations")
	cs, err := mcpSession(t, s, mcpOperatorToken)
	require.NoError(t, err)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.NotEmpty(t, res.Tools)
	reads := map[string]bool{}
	for _, n := range readTools {
		reads[n] = true
	}
	for _, tool := range res.Tools {
		require.NotEmpty(t, tool.Description, tool.Name)
		a := tool.Annotations
		require.NotNil(t, a, "%s carries annotations", tool.Name)
		require.NotNil(t, a.OpenWorldHint, "%s says whether it reaches beyond sluice", tool.Name)
		if reads[tool.Name] {
			require.True(t, a.ReadOnlyHint, tool.Name)
		} else {
			require.False(t, a.ReadOnlyHint, tool.Name)
			require.NotNil(t, a.DestructiveHint, "%s says whether it is destructive", tool.Name)
		}
		var schema jsonschema.Schema
		raw, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &schema))
		for name, prop := range schema.Properties {
			require.NotEmpty(t, prop.Description, "%s.%s is described", tool.Name, name)
		}
	}
	byName := map[string]map[string]*jsonschema.Schema{}
	for _, tool := range res.Tools {
		var schema jsonschema.Schema
		raw, _ := json.Marshal(tool.InputSchema)
		require.NoError(t, json.Unmarshal(raw, &schema))
		byName[tool.Name] = schema.Properties
	}
	require.ElementsMatch(t, []any{"queued", "pending", "running", "sharded", "completed", "failed", "cancelled"},
		byName["list_runs"]["status"].Items.Enum, "list_runs.status items are an enum")
	require.ElementsMatch(t, []any{"proposed", "approved", "rejected", "expired"},
		byName["list_change_requests"]["status"].Enum)
	require.Contains(t, slices.Collect(maps.Keys(byName["run_template"])), "idempotency_key")
}

// propose_run → get_change_request (proposed) → a person approves over REST →
// get_change_request (approved, run_id) → get_run until it completed, in the REST shape.
func TestMCPProposeApproveRunFlow(t *testing.T) {
	t.Parallel()
	s := startMCPServer(t)
	cs, err := mcpSession(t, s, mcpOperatorToken)
	require.NoError(t, err)

	proposed, isErr := call(t, cs, "propose_run", map[string]any{"config": tinyConfig(2)})
	require.False(t, isErr, proposed)
	crID, _ := proposed["change_request_id"].(string)
	require.NotEmpty(t, crID, proposed)

	got, isErr := call(t, cs, "get_change_request", map[string]any{"change_request_id": crID})
	require.False(t, isErr, got)
	require.Equal(t, false, got["decided"])
	require.Equal(t, "proposed", got["change_request"].(map[string]any)["status"])
	listed, isErr := call(t, cs, "list_change_requests", map[string]any{"status": "proposed"})
	require.False(t, isErr, listed)
	require.Len(t, listed["change_requests"], 1)

	code, body := s.do(t, http.MethodPost, "/v1/change-requests/"+crID+"/approve", mcpAdminToken, "")
	require.Equal(t, http.StatusOK, code, body)

	got, isErr = call(t, cs, "get_change_request", map[string]any{"change_request_id": crID})
	require.False(t, isErr, got)
	require.Equal(t, true, got["decided"])
	cr := got["change_request"].(map[string]any)
	require.Equal(t, "approved", cr["status"])
	runID, _ := cr["run_id"].(string)
	require.NotEmpty(t, runID)
	// One view of a change request: REST answers exactly what the tool answered.
	code, restCR := s.do(t, http.MethodGet, "/v1/change-requests/"+crID, mcpViewerToken, "")
	require.Equal(t, http.StatusOK, code, restCR)
	require.Equal(t, restCR, cr)
	code, restList := s.do(t, http.MethodGet, "/v1/change-requests", mcpViewerToken, "")
	require.Equal(t, http.StatusOK, code, restList)
	listed, isErr = call(t, cs, "list_change_requests", map[string]any{})
	require.False(t, isErr, listed)
	require.Equal(t, restList, listed)

	var run map[string]any
	require.Eventually(t, func() bool {
		got, isErr := call(t, cs, "get_run", map[string]any{"run_id": runID})
		require.False(t, isErr, got)
		run = got["run"].(map[string]any)
		return got["terminal"] == true
	}, 20*time.Second, 20*time.Millisecond)
	require.Equal(t, "completed", run["status"], run)

	// The very shape of GET /v1/runs/{id}: the same keys, the same values.
	code, rest := s.do(t, http.MethodGet, "/v1/runs/"+runID, mcpViewerToken, "")
	require.Equal(t, http.StatusOK, code)
	require.ElementsMatch(t, slices.Collect(maps.Keys(rest)), slices.Collect(maps.Keys(run)))
	require.Equal(t, rest["owner"], run["owner"], "owner is an object, not a string")
	require.Equal(t, rest["attempts"], run["attempts"])
	require.Equal(t, rest["claimed_at"], run["claimed_at"])
	require.Equal(t, rest["template"], run["template"])
}
