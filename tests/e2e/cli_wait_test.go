package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
)

// `runs submit --wait` ends when the run ends, not at the server's next poll (SPEC §14.7):
// the server's poll is 20 s here, and the CLI's last request — the GET that follows the
// stream's end — reaches the server within 200 ms of the run's finished_at. Both instants
// are the server's own (the history's clock and the access log of the same host), so a
// slow test process cannot make the measure pass or fail.
func TestCLIWaitReturnsWhenTheRunEnds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	s := startServe(t, data, nil, "--log-format", "json", "--lease-ttl-secs", "60", "--cluster-poll-secs", "20")
	cfg := filepath.Join(dir, "slow.yaml")
	// 20 rows at 20 rows/s: the stream is waiting when the run ends.
	require.NoError(t, os.WriteFile(cfg, []byte(generateConfig("slow", filepath.Join(dir, "out.db"), 20, 20, 5, "")), 0o600))
	env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "config")}
	r := e2e.Run(t, e2e.Cmd{Args: []string{"runs", "submit", cfg, "--wait", "-o", "name", "--data-dir", data}, Env: env, Dir: dir})
	require.Equal(t, 0, r.Code, r.String())
	id := strings.TrimSpace(r.Stdout)

	var run struct {
		Status     string `json:"status"`
		FinishedAt string `json:"finished_at"`
	}
	require.Equal(t, 200, s.api(t, "GET", "/v1/runs/"+id, nil, &run))
	require.Equal(t, "completed", run.Status)
	finished, err := time.Parse(time.RFC3339Nano, run.FinishedAt)
	require.NoError(t, err)

	res := s.stop(t)
	// The access lines, in the order the server wrote them: submit, the log stream
	// (written when it ended), then the CLI's GET of the ended run.
	var streamEnd, lastGet time.Time
	for _, line := range strings.Split(res.Stderr, "\n") {
		var m struct {
			Msg, Route, Method, Time string
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Msg != "request" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m.Time)
		require.NoError(t, err, line)
		switch {
		case m.Route == "/v1/runs/:id/logs":
			streamEnd = at
		case m.Route == "/v1/runs/:id" && m.Method == "GET" && !streamEnd.IsZero() && lastGet.IsZero():
			lastGet = at
		}
	}
	require.False(t, streamEnd.IsZero(), "the CLI followed the log stream:\n%s", res.Stderr)
	require.False(t, lastGet.IsZero(), "the CLI read the ended run:\n%s", res.Stderr)
	t.Logf("finished_at %s; stream ended %s later; the CLI's GET %s later", finished.Format(time.RFC3339Nano),
		streamEnd.Sub(finished), lastGet.Sub(finished))
	require.Less(t, lastGet.Sub(finished), 200*time.Millisecond,
		"--wait returns within 200 ms of the run's end, whatever the server's poll interval")
}
