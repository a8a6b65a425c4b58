package bootstrap_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
)

// The JSON log of a served run speaks one vocabulary (SPEC §14.6): every line is JSON —
// the notice of the generated token too; a pipeline is always "pipeline", never "name";
// instance_id appears once per line; a completed run's lines carry no empty code; the
// request line names its route, status and request id.
func TestServeJSONLogKeys(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := startServer(t, nil, "--history", "memory", "--data-dir", data, "--log-format", "json", "--cluster-poll-secs", "1")
	token, err := os.ReadFile(filepath.Join(data, cli.TokenFile))
	require.NoError(t, err)
	body := `{"config": "version: 1\nname: keyed\npipeline:\n  source: {type: generate, config: {count: 5}}\n  sink: {type: stdout}\n"}`
	code, sub := s.do(t, "POST", "/v1/runs", strings.TrimSpace(string(token)), body)
	require.Equal(t, http.StatusAccepted, code, sub)
	id := sub["run_id"].(string)
	require.Eventually(t, func() bool {
		_, run := s.do(t, "GET", "/v1/runs/"+id, strings.TrimSpace(string(token)), "")
		return run["status"] == "completed"
	}, 20*time.Second, 20*time.Millisecond)
	require.Equal(t, 0, s.stop(), s.stderr.String())

	byMsg := map[string]map[string]any{}
	for _, raw := range strings.Split(strings.TrimSpace(s.stderr.String()), "\n") {
		var line map[string]any
		require.NoErrorf(t, json.Unmarshal([]byte(raw), &line), "every log line is JSON: %s", raw)
		require.LessOrEqualf(t, strings.Count(raw, `"instance_id":`), 1, "instance_id once: %s", raw)
		require.NotContainsf(t, line, "name", "a pipeline is named by the key pipeline: %s", raw)
		if line["run_id"] == id {
			require.NotContainsf(t, raw, `"code":""`, "no empty code: %s", raw)
		}
		if _, seen := byMsg[line["msg"].(string)]; !seen {
			byMsg[line["msg"].(string)] = line
		}
	}
	var notice map[string]any
	for msg, line := range byMsg {
		if strings.Contains(msg, "API token") {
			notice = line
		}
	}
	require.NotNil(t, notice, "the token notice is a log line")
	require.Equal(t, filepath.Join(data, cli.TokenFile), notice["token_file"])
	require.NotContains(t, s.stderr.String(), strings.TrimSpace(string(token)), "the token itself is never logged")

	for _, msg := range []string{"run submitted", "run started", "run finished"} {
		require.Containsf(t, byMsg, msg, "%s is logged", msg)
		require.Equalf(t, "keyed", byMsg[msg]["pipeline"], "%s names the pipeline", msg)
		require.Equal(t, id, byMsg[msg]["run_id"])
		require.NotEmpty(t, byMsg[msg]["instance_id"])
	}
	require.Equal(t, "completed", byMsg["run finished"]["status"])
	require.NotContains(t, byMsg["run finished"], "code")
	req := byMsg["request"]
	require.NotNil(t, req)
	require.NotEmpty(t, req["request_id"])
	require.NotEmpty(t, req["route"])
	require.Contains(t, req, "status")
}
