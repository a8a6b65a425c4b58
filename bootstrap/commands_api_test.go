package bootstrap_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// commandOf is the command of each API operation (SPEC §14.7: a command for every API
// action), by operationId; a new operation without one fails the test below.
var commandOf = map[string]string{
	"listAuditEntries":     "audit",
	"startBackfill":        "backfill",
	"listChangeRequests":   "change-requests list",
	"getChangeRequest":     "change-requests get",
	"approveChangeRequest": "change-requests approve",
	"rejectChangeRequest":  "change-requests reject",
	"listConnectors":       "connectors list", // offline, from the same registry
	"getReadiness":         "cluster status",
	"listRuns":             "runs list",
	"submitRun":            "runs submit",
	"getRun":               "runs get",
	"deleteRun":            "runs delete",
	"cancelRun":            "runs cancel",
	"getRunConfig":         "runs config",
	"getRunLogs":           "runs logs",
	"rollbackRun":          "runs rollback",
	"listRunShards":        "runs shards",
	"listSchedules":        "schedule list",
	"getSchedule":          "schedule get",
	"previewSchedule":      "schedule next", // offline, the same next-tick function
	"deleteSchedule":       "schedule delete",
	"pauseSchedule":        "schedule pause",
	"resumeSchedule":       "schedule resume",
	"listScheduleTicks":    "schedule ticks",
	"createSchedule":       "schedule create",
	"listTemplates":        "templates list",
	"registerTemplate":     "templates register",
	"getTemplate":          "templates get",
	"deleteTemplate":       "templates delete",
	"fanOutTemplate":       "templates fanout",
	"runTemplate":          "templates run",
	"runTenantTemplate":    "templates run", // --tenant
	"postMCPMessage":       "mcp",           // the stdio relay
	"openMCPStream":        "mcp",
	"endMCPSession":        "mcp",
}

// noCommand are operations for machines, each with the reason it has no command.
var noCommand = map[string]string{
	"getLiveness":        "a probe for orchestrators",
	"getMetrics":         "scraped by Prometheus",
	"getOpenAPIDocument": "read by generators",
}

// Every operation of the served OpenAPI document has a command (or a reason not to), and
// each named command exists in the binary.
func TestEveryAPIOperationHasACommand(t *testing.T) {
	t.Parallel()
	s := startMCPServer(t)
	code, doc := s.do(t, http.MethodGet, "/v1/openapi.json", "", "")
	require.Equal(t, http.StatusOK, code)
	var missing, seen []string
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			id, _ := op.(map[string]any)["operationId"].(string)
			seen = append(seen, id)
			if _, ok := commandOf[id]; !ok && noCommand[id] == "" {
				missing = append(missing, strings.ToUpper(method)+" "+path+" ("+id+")")
			}
		}
	}
	require.Empty(t, missing, "API operations without a CLI command")
	for id := range commandOf {
		require.Contains(t, seen, id, "commandOf names an operation the document no longer has")
	}

	var commands []string
	for _, c := range commandOf {
		if !slices.Contains(commands, c) {
			commands = append(commands, c)
		}
	}
	for _, c := range commands {
		code, stdout, stderr := run(t, nil, append(strings.Fields(c), "--help")...)
		require.Equal(t, 0, code, "%s: %s", c, stderr)
		// An unknown subcommand with --help shows its parent's help: require its own.
		require.Contains(t, stdout, "Usage:\n  sluice "+c, "sluice %s exists", c)
	}
}
