package cli_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
)

// restBodies are answers of a server, in the REST shapes, by path.
var restBodies = map[string]string{
	"/v1/templates":            `{"templates":[` + templateBody + `]}`,
	"/v1/templates/orders":     templateBody,
	"/v1/change-requests":      `{"change_requests":[` + changeRequestBody + `],"next_cursor":null}`,
	"/v1/change-requests/cr-1": changeRequestBody,
	"/v1/schedules/s-1":        scheduleBody,
	"/v1/schedules":            `{"schedules":[` + scheduleBody + `]}`,
	"/v1/audit": `{"entries":[{"at":"2026-12-01T10:00:00Z","actor":"alice","action":"template.registered","run_id":null,` +
		`"details":{"template_id":"orders","version":2}},{"at":"2026-12-01T10:01:00Z","actor":"otto","action":"run.submitted",` +
		`"run_id":"r-1","details":{"name":"orders","pool":"default"}}],"next_after":2}`,
	"/readyz": `{"status":"ok","history_ok":true,"queue_ok":true,"draining":false,"cluster":{"enabled":true,"instances":2,` +
		`"pools":["default","gpu"],"members":[{"instance_id":"m-1","listen":"10.0.0.1:8080","pools":["default","gpu"],` +
		`"in_flight":1,"max_concurrent":4},{"instance_id":"m-2","listen":"10.0.0.2:8080","pools":["default"],"in_flight":0,"max_concurrent":4}]}}`,
}

const (
	templateBody = `{"id":"orders","version":2,"pool":null,"pool_override":false,"tenants":[],"params":[{"name":"day",` +
		`"type":"date","required":true,"default":null,"secret":false,"description":"the day to export","min":"2020-01-01"}],` +
		`"created_by":"alice","created_at":"2026-12-01T10:00:00Z"}`
	changeRequestBody = `{"id":"cr-1","proposer":"otto","tenant":null,"name":"orders-mirror","pool":"default",` +
		`"trigger_kind":"api","status":"approved","created_at":"2026-12-01T10:00:00Z","expires_at":"2026-12-08T10:00:00Z",` +
		`"decided_by":"olga","decided_at":"2026-12-01T10:05:00Z","run_id":"r-9"}`
	scheduleBody = `{"id":"s-1","template_id":"orders","cron":"30 2 * * *","timezone":"Europe/Berlin","start_date":null,` +
		`"catchup":false,"max_catchup_runs":1,"overlap_policy":"skip","params":{"day":"2026-12-01"},"pool":null,"labels":{},` +
		`"paused":false,"created_by":"alice","created_at":"2026-12-01T10:00:00Z","last_tick":null,"next_tick":"2026-12-02T01:30:00Z"}`
)

// Every get and list prints each -o format as its golden file shows (rewrite with
// -update): the table, the wide table, the REST body as JSON and YAML, and the names.
func TestGetAndListFormatsGolden(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := restBodies[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.Error(w, `{"error":{"code":"not_found","message":"no such canned answer"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"SLUICE_SERVER": srv.URL, "SLUICE_TOKEN": "t"}
	for _, tc := range []struct {
		args []string
		path string // whose REST body -o json prints
	}{
		{[]string{"templates", "list"}, "/v1/templates"}, {[]string{"templates", "get", "orders"}, "/v1/templates/orders"},
		{[]string{"change-requests", "list"}, "/v1/change-requests"},
		{[]string{"change-requests", "get", "cr-1"}, "/v1/change-requests/cr-1"},
		{[]string{"schedule", "list"}, "/v1/schedules"}, {[]string{"schedule", "get", "s-1"}, "/v1/schedules/s-1"},
		{[]string{"audit"}, "/v1/audit"}, {[]string{"cluster", "status"}, "/readyz"},
	} {
		for _, format := range []string{"table", "wide", "json", "yaml", "name"} {
			code, out, stderr := execIn(t, cli.RunsDeps{}, env, append(tc.args, "-o", format)...)
			require.Equal(t, 0, code, "%v -o %s: %s", tc.args, format, stderr)
			golden(t, strings.Join(tc.args[:min(2, len(tc.args))], "-")+"."+format+".golden", out)
			if format == "json" {
				require.JSONEq(t, restBodies[tc.path], out, "%v -o json is the REST body", tc.args)
			}
		}
	}
}
