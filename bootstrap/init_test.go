package bootstrap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// `sluice init` writes a project that runs as its README says: the pipeline runs, the
// template validates, the mistakes are reported, and the principals have fresh tokens.
func TestInitWritesARunnableProject(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "demo")
	code, out, stderr := run(t, nil, "init", dir)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "wrote "+filepath.Join(dir, "orders.yaml"))

	code, out, stderr = run(t, nil, "run", filepath.Join(dir, "orders.yaml"), "--data-dir", filepath.Join(dir, ".sluice"))
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "completed: 8 rows read, 8 written")
	for tpl, params := range map[string][]string{"orders.tpl.yaml": {"--param", "day=2026-12-01"},
		"orders-window.tpl.yaml": nil, "customer.tpl.yaml": {"--param", "customer=globex"}} {
		code, _, stderr = run(t, nil, append([]string{"validate", filepath.Join(dir, tpl)}, params...)...)
		require.Equal(t, 0, code, "%s: %s", tpl, stderr)
	}
	code, _, stderr = run(t, nil, "validate", filepath.Join(dir, "bad.yaml"))
	require.Equal(t, 2, code)
	require.Equal(t, 3, strings.Count(stderr, "error:"), stderr)

	p, err := os.ReadFile(filepath.Join(dir, "principals.yaml"))
	require.NoError(t, err)
	require.NotContains(t, string(p), "change-me", "the example tokens are replaced")
	require.Contains(t, string(p), "principals:")

	code, _, stderr = run(t, nil, "init", dir)
	require.Equal(t, 2, code, "init never overwrites")
	require.Contains(t, stderr, "already has")
}

// ${backfill.start|end} resolve in a backfill run: validate accepts a template that uses
// them; `run`, which is never a backfill, still says where they resolve.
func TestValidateAcceptsBackfillDirectives(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "daily.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("version: 1\nname: daily\npipeline:\n"+
		"  source: {type: generate, config: {count: 1}}\n"+
		"  sink: {type: file, config: {path: \"out-${backfill.start}-${backfill.end}.jsonl\"}}\n"), 0o600))
	code, out, stderr := run(t, nil, "validate", cfg)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "ok\n", out)
	code, _, stderr = run(t, nil, "run", cfg, "--data-dir", filepath.Join(dir, ".sluice"))
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "${backfill.start} only resolves in a backfill run")
}
