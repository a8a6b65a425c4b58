package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

func TestRunSuccessPrintsSummary(t *testing.T) {
	t.Parallel()
	h := newHarness()
	file := configFile(t)
	code, stdout, stderr := h.exec(t, "run", file, "--param", "region=eu", "--param", "n=3")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "completed: 100000 rows read, 100000 written, 10 pages, 1.2s (83k rows/s)\n", stdout)
	require.Contains(t, stderr, "run started")

	opts := h.loader.opts
	require.Equal(t, filepath.Dir(file), opts.BaseDir)
	require.Equal(t, map[string]string{"region": "eu", "n": "3"}, opts.Params)
	require.Equal(t, time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), opts.Logical)
	require.Equal(t, "version: 1\n", h.loader.text)
	require.Equal(t, filepath.Dir(file), h.runner.job.BaseDir)
	require.Nil(t, h.runner.job.State, "a full run needs no state")
}

func TestRunLogsAreRedacted(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.redact.Register("hunter2")
	code, _, stderr := h.exec(t, "run", configFile(t))
	require.Equal(t, 0, code)
	require.Contains(t, stderr, "connector says hello")
	require.NotContains(t, stderr, "hunter2")
}

func TestRunSummaryGoesToStderrForStdoutSink(t *testing.T) {
	t.Parallel()
	for _, sink := range []pipeline.Connector{
		{Type: "stdout", Config: map[string]any{}},
		{Type: "file", Config: map[string]any{"path": "-"}},
	} {
		h := newHarness()
		h.loader.cfg.Sink = sink
		code, stdout, stderr := h.exec(t, "run", configFile(t))
		require.Equal(t, 0, code)
		require.Empty(t, stdout, "stdout belongs to the data")
		require.Contains(t, stderr, "completed: 100000 rows read")
	}
}

func TestRunJSON(t *testing.T) {
	t.Parallel()
	h := newHarness()
	code, stdout, _ := h.exec(t, "run", configFile(t), "--json")
	require.Equal(t, 0, code)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	require.Equal(t, "completed", res["status"])
	require.Equal(t, "orders", res["name"])
	require.Nil(t, res["error"])
	require.Equal(t, map[string]any{"rows_read": 100000.0, "rows_written": 100000.0, "pages": 10.0, "bytes": 0.0,
		"elapsed_ms": 1200.0}, res["stats"])
}

func TestRunPipelineFailureExits1(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.redact.Register("s3cret")
	h.runner.err = &execute.Failure{Code: run.CodePipelineError, Role: "sink", Connector: "sqlite", Page: 3,
		Err: fmt.Errorf("insert into sqlite:/tmp/x?password=s3cret: %w", errBoom)}
	h.runner.stats = execute.Stats{RowsRead: 30, RowsWritten: 20, Pages: 2, Elapsed: time.Second}
	code, stdout, stderr := h.exec(t, "run", configFile(t))
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "failed: sink sqlite: page 3: insert into")
	require.Contains(t, stderr, "[pipeline_error; 30 rows read, 20 written, 2 pages")
	require.NotContains(t, stderr, "s3cret")
	require.Equal(t, 1, strings.Count(stderr, "failed"), "the failure is reported once")

	code, stdout, _ = h.exec(t, "run", configFile(t), "--json")
	require.Equal(t, 1, code)
	var res struct {
		Status string
		Error  struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	require.Equal(t, "failed", res.Status)
	require.Equal(t, "pipeline_error", res.Error.Code)
	require.NotContains(t, res.Error.Message, "s3cret")
}

func TestRunTimeoutAndConfigFailureCodes(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.runner.err = &execute.Failure{Code: run.CodeTimeout, Err: errBoom}
	code, _, stderr := h.exec(t, "run", configFile(t), "--timeout", "1m")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "[timeout;")
	require.Equal(t, time.Minute, h.runner.job.Timeout)

	h.runner.err = &execute.Failure{Code: run.CodeConfigError, Role: "state", Err: errBoom}
	code, _, _ = h.exec(t, "run", configFile(t))
	require.Equal(t, 2, code)
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.runner.err = fmt.Errorf("cancelled after 2 confirmed pages: %w", context.Canceled)
	code, stdout, stderr := h.exec(t, "run", configFile(t))
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "cancelled: 100000 rows read")
}

func TestRunConfigErrorsOnePerLine(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.redact.Register("hunter2")
	h.loader.cfg, h.loader.err = nil, pipeline.Errors{
		{Path: "pipeline.sink.type", Pos: pipeline.Pos{Line: 7, Column: 11}, Message: `unknown connector type "nope"; known: file, sqlite`},
		{Path: "pipeline.source.config.connection_url", Message: "${env:PG_URL}: PG_URL is not set (hunter2)"},
	}
	file := configFile(t)
	code, stdout, stderr := h.exec(t, "run", file)
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Equal(t, []string{
		"error: " + file + `: pipeline.sink.type: unknown connector type "nope"; known: file, sqlite (line 7, column 11)`,
		"error: " + file + ": pipeline.source.config.connection_url: ${env:PG_URL}: PG_URL is not set (" + redactedOf(h, "hunter2") + ")",
	}, lines)
	require.Nil(t, h.runner.job.Config, "nothing ran")

	h.loader.err = &pipeline.SyntaxError{Pos: pipeline.Pos{Line: 3, Column: 2}, Message: "mapping values are not allowed"}
	code, _, stderr = h.exec(t, "run", file)
	require.Equal(t, 2, code)
	require.Equal(t, "error: "+file+": mapping values are not allowed (line 3, column 2)\n", stderr)
}

func redactedOf(h *harness, s string) string { return h.redact.Redact(s) }

func TestRunMissingFileExits2(t *testing.T) {
	t.Parallel()
	code, _, stderr := newHarness().exec(t, "run", filepath.Join(t.TempDir(), "nope.yaml"))
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "nope.yaml")
}

func TestRunReadsStdin(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.stdin = "name: from-stdin\n"
	code, _, _ := h.exec(t, "run", "-")
	require.Equal(t, 0, code)
	require.Equal(t, "name: from-stdin\n", h.loader.text)
}

func TestRunBadFlags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		env  map[string]string
		msg  string
	}{
		{[]string{"--param", "novalue"}, nil, `invalid --param "novalue"`},
		{[]string{"--log-level", "loud"}, nil, "--log-level"},
		{[]string{"--timeout", "-1s"}, nil, "--timeout"},
		{[]string{"--timeout", "soon"}, nil, "--timeout"},
		{nil, map[string]string{"SLUICE_QUIET": "perhaps"}, "invalid value for --quiet (from SLUICE_QUIET)"},
		{nil, map[string]string{"SLUICE_TIMEOUT": "soon"}, "invalid value for --timeout (from SLUICE_TIMEOUT)"},
		{[]string{"--nope"}, nil, "unknown flag: --nope"},
	}
	for _, tc := range cases {
		h := newHarness()
		for k, v := range tc.env {
			h.env[k] = v
		}
		code, _, stderr := h.exec(t, append([]string{"run", configFile(t)}, tc.args...)...)
		require.Equal(t, 2, code, tc.msg)
		require.Contains(t, stderr, tc.msg)
		require.Nil(t, h.runner.job.Config, "nothing ran")
	}
	code, _, stderr := newHarness().exec(t, "run")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "accepts 1 arg")
}

func TestRunIncrementalUsesDataDirState(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.loader.cfg.Replication = pipeline.Replication{Type: pipeline.Incremental, Cursor: "id"}
	code, _, stderr := h.exec(t, "run", configFile(t))
	require.Equal(t, 0, code, stderr)
	require.Equal(t, ".sluice", h.dataDir)
	require.Equal(t, "_/orders", h.runner.job.StateKey)
	require.NotNil(t, h.runner.job.State)

	h.env["SLUICE_DATA_DIR"] = "/from/env"
	h.loader.cfg.State.Key = "custom-key"
	code, _, _ = h.exec(t, "run", configFile(t))
	require.Equal(t, 0, code)
	require.Equal(t, "/from/env", h.dataDir)
	require.Equal(t, "custom-key", h.runner.job.StateKey)

	code, _, _ = h.exec(t, "run", configFile(t), "--data-dir", "/from/flag")
	require.Equal(t, 0, code)
	require.Equal(t, "/from/flag", h.dataDir, "the flag wins over the environment")

	h.loader.cfg.State.Type = pipeline.StatePostgres
	code, _, stderr = h.exec(t, "run", configFile(t))
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "pipeline.state.type")
}

func TestRunExactlyOnceKeysTheWatermark(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.loader.cfg.Delivery = pipeline.ExactlyOnce
	h.loader.cfg.Replication = pipeline.Replication{Type: pipeline.Incremental, Cursor: "id"}
	h.loader.cfg.State.Type = pipeline.StatePostgres // not opened: the watermark holds the bookmark
	code, _, stderr := h.exec(t, "run", configFile(t))
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "_/orders", h.runner.job.StateKey)
	require.Nil(t, h.runner.job.State)
}

func TestRunParamsFromEnv(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.env["SLUICE_PARAM"] = "a=1,b=2"
	code, _, _ := h.exec(t, "run", configFile(t))
	require.Equal(t, 0, code)
	require.Equal(t, map[string]string{"a": "1", "b": "2"}, h.loader.opts.Params)
}

func TestRunWarningsPrinted(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.loader.cfg.ShardCount = 8
	code, _, stderr := h.exec(t, "run", configFile(t))
	require.Equal(t, 0, code)
	for _, w := range pipeline.RunWarnings(h.loader.cfg, nil) {
		require.Contains(t, stderr, "warning: "+w)
	}
	require.NotEmpty(t, pipeline.RunWarnings(h.loader.cfg, nil), "a sharded config warns in run")
}

func TestRunProgressLogLines(t *testing.T) {
	t.Parallel()
	h := newHarness()
	for i := range 10 {
		h.runner.progress = append(h.runner.progress, execute.Stats{
			RowsWritten: int64(i+1) * 10, Pages: int64(i + 1), Elapsed: time.Duration(i+1) * 300 * time.Millisecond,
		})
	}
	code, _, stderr := h.exec(t, "run", configFile(t), "--log-format", "text")
	require.Equal(t, 0, code)
	// 3 s of pages with a 1 s interval: at most 3 lines.
	n := strings.Count(stderr, "msg=progress")
	require.GreaterOrEqual(t, n, 2)
	require.LessOrEqual(t, n, 3)
	require.Contains(t, stderr, "rows_written=")

	// Not a terminal and no --log-format: JSON lines for a collector.
	code, _, stderr = h.exec(t, "run", configFile(t))
	require.Equal(t, 0, code)
	n = strings.Count(stderr, `"msg":"progress"`)
	require.GreaterOrEqual(t, n, 2)
	require.NotContains(t, stderr, "msg=progress")

	code, _, stderr = h.exec(t, "run", configFile(t), "--log-format", "yaml")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--log-format")

	code, _, stderr = h.exec(t, "run", configFile(t), "--quiet")
	require.Equal(t, 0, code)
	require.NotContains(t, stderr, "msg=progress")
}

func TestRunProgressBarOnTerminal(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.term = true
	h.runner.progress = []execute.Stats{{RowsWritten: 5, Pages: 1, Elapsed: time.Second}}
	code, stdout, stderr := h.exec(t, "run", configFile(t))
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "completed:")
	require.Contains(t, stderr, "pages")
	require.NotContains(t, stderr, "msg=progress", "a terminal gets a bar, not log lines")
	require.NotContains(t, stderr, "run started", "info logs stay out of the bar's way")
}

func TestRunFailureHidesURLCredentials(t *testing.T) {
	t.Parallel()
	h := newHarness()
	h.runner.err = &execute.Failure{Code: run.CodePipelineError, Role: "source", Connector: "postgres", Page: 1,
		Err: fmt.Errorf("dial postgres://bob:pa55@db.example:5432/app failed: %w", errBoom)}
	code, _, stderr := h.exec(t, "run", configFile(t))
	require.Equal(t, 1, code)
	require.NotContains(t, stderr, "pa55")
	require.Contains(t, stderr, "postgres://bob:***@db.example:5432/app")
}
