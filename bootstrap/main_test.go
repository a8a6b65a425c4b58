package bootstrap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/bootstrap"
)

func run(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := bootstrap.Run(context.Background(), append([]string{"sluice"}, args...), cli.Env{
		Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Stdin:  &bytes.Buffer{}, Stdout: &stdout, Stderr: &stderr,
	})
	return code, stdout.String(), stderr.String()
}

func TestVersionAndUnknownCommand(t *testing.T) {
	t.Parallel()
	code, stdout, _ := run(t, nil, "version")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "sluice ")
	code, _, stderr := run(t, nil, "nope")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `unknown command "nope"`)
}

const incremental = `version: 1
name: inc
replication: { type: incremental, cursor: id }
pipeline:
  source: { type: file, config: { path: in.csv } }
  sink: { type: file, config: { path: "${env:OUT}" } }
`

func TestRunWiresLocalStateAndEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in.csv"), []byte("id,v\n1,a\n2,b\n"), 0o600))
	cfg := filepath.Join(dir, "p.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(incremental), 0o600))
	env := map[string]string{"OUT": filepath.Join(dir, "out.csv"), "SLUICE_DATA_DIR": filepath.Join(dir, "data")}

	code, stdout, stderr := run(t, env, "run", cfg, "--json")
	require.Equal(t, 0, code, stderr)
	var res struct {
		Status string
		Stats  struct {
			RowsWritten int64 `json:"rows_written"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	require.Equal(t, "completed", res.Status)
	require.Equal(t, int64(2), res.Stats.RowsWritten)
	raw, err := os.ReadFile(filepath.Join(dir, "data", "state.json"))
	require.NoError(t, err)
	require.Contains(t, string(raw), `"_/inc"`)
}

func TestRunRefusesStateTypeItCannotUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in.csv"), []byte("id\n1\n"), 0o600))
	cfg := filepath.Join(dir, "p.yaml")
	text := incremental + "  state: { type: history }\n"
	require.NoError(t, os.WriteFile(cfg, []byte(text), 0o600))
	code, _, stderr := run(t, map[string]string{"OUT": filepath.Join(dir, "o.csv")}, "run", cfg, "--data-dir", dir)
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "pipeline.state.type")
	require.Contains(t, stderr, `"history"`)
}
