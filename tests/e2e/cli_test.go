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

// TestCLIFindsTheLocalServer: serve writes <data-dir>/server.json (removed at exit), the
// CLI finds the server from it on any port, a SLUICE_POOL exported for the server does not
// filter `runs list`, and `--wait` follows the run to its end with the right exit code.
func TestCLIFindsTheLocalServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	s := startServe(t, data, nil)
	raw, err := os.ReadFile(filepath.Join(data, "server.json"))
	require.NoError(t, err, "serve announces itself in its data directory")
	var sf struct {
		URL        string `json:"url"`
		PID        int    `json:"pid"`
		InstanceID string `json:"instance_id"`
	}
	require.NoError(t, json.Unmarshal(raw, &sf))
	require.Equal(t, s.url(), sf.URL)
	require.Equal(t, s.Pid(), sf.PID)
	require.NotEmpty(t, sf.InstanceID)

	cfg := filepath.Join(dir, "tiny.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(generateConfig("tiny", filepath.Join(dir, "out.db"), 10, 0, 5, "")), 0o600))
	// No --server: the address comes from server.json; no contexts in this config dir.
	env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(dir, "config"), "SLUICE_POOL": "gpu", "SLUICE_NAME": "other"}
	cli := func(args ...string) e2e.Result {
		return e2e.Run(t, e2e.Cmd{Args: append(args, "--data-dir", data), Env: env, Dir: dir})
	}
	start := time.Now()
	r := cli("runs", "submit", cfg, "--wait", "-o", "name")
	t.Logf("runs submit --wait of a 10-row run returned after %s", time.Since(start))
	require.Equal(t, 0, r.Code, r.String())
	id := strings.TrimSpace(r.Stdout)
	require.Equal(t, "completed", s.get(t, id).Status)

	r = cli("runs", "list", "-o", "name")
	require.Equal(t, 0, r.Code, r.String())
	require.Equal(t, id+"\n", r.Stdout, "SLUICE_POOL and SLUICE_NAME, set for a server, filter nothing")

	r = cli("runs", "wait", id, "-o", "json")
	require.Equal(t, 0, r.Code, r.String())
	require.Contains(t, r.Stdout, `"status":"completed"`)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(generateConfig("bad", filepath.Join(dir, "nonexistent-dir", "x", "out.db"), 10, 0, 5, "")), 0o600))
	r = cli("runs", "submit", bad, "--wait")
	require.Equal(t, 1, r.Code, "a failed run exits 1: %s", r.String())

	s.stop(t)
	require.NoFileExists(t, filepath.Join(data, "server.json"), "removed at exit")
	r = cli("runs", "list")
	require.Equal(t, 1, r.Code)
	require.Contains(t, r.Stderr, "looked at "+filepath.Join(data, "server.json")+": not found")
	require.Contains(t, r.Stderr, "--server URL")
	require.Contains(t, r.Stderr, "--context NAME")
}
