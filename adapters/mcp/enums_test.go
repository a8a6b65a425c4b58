package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/adapters/mcp"
	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

type noApprovals struct{}

func (noApprovals) List(context.Context, runs.Principal, approvals.Filter) ([]*approvals.ChangeRequest, error) {
	return nil, nil
}

func (noApprovals) Get(context.Context, runs.Principal, string) (*approvals.ChangeRequest, error) {
	return nil, run.ErrNotFound
}

// TestToolEnumsAreTheDomainLists reads the tool schemas an agent sees and compares each
// closed list with the one the server uses, so a status added to the domain reaches the
// agent's schema (and a stale one cannot linger there).
func TestToolEnumsAreTheDomainLists(t *testing.T) {
	t.Parallel()
	cs := sessionWith(t, mcp.Deps{Runs: fakeRuns{}, Approvals: noApprovals{}, Errors: sluicehttp.Classify},
		runs.Principal{Name: "alice", Role: runs.Admin})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	listed, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)

	type schema struct {
		Enum        []string          `json:"enum"`
		Description string            `json:"description"`
		Items       *schema           `json:"items"`
		Properties  map[string]schema `json:"properties"`
	}
	input, output := map[string]schema{}, map[string]schema{}
	for _, tool := range listed.Tools {
		for into, from := range map[*map[string]schema]any{&input: tool.InputSchema, &output: tool.OutputSchema} {
			b, err := json.Marshal(from)
			require.NoError(t, err)
			var sc schema
			require.NoError(t, json.Unmarshal(b, &sc))
			(*into)[tool.Name] = sc
		}
	}
	var runStatuses, changeStatuses []string
	for _, st := range run.Statuses() {
		runStatuses = append(runStatuses, string(st))
	}
	for _, st := range approvals.Statuses() {
		changeStatuses = append(changeStatuses, string(st))
	}
	require.Contains(t, input, "list_runs")
	require.NotNil(t, input["list_runs"].Properties["status"].Items, "list_runs status is a list")
	require.Equal(t, runStatuses, input["list_runs"].Properties["status"].Items.Enum)
	require.Contains(t, input, "list_change_requests")
	require.Equal(t, changeStatuses, input["list_change_requests"].Properties["status"].Enum)

	// The run an agent reads (the REST run shape) names its closed lists in prose: every
	// status and trigger kind must be there.
	view := output["get_run"].Properties["run"].Properties
	for _, st := range run.Statuses() {
		require.Contains(t, view["status"].Description, string(st), "get_run's status description")
	}
	for _, k := range run.TriggerKinds() {
		require.Contains(t, view["trigger_kind"].Description, string(k), "get_run's trigger_kind description")
	}
}
