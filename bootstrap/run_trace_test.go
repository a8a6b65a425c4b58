package bootstrap_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/telemetry/otlptest"
)

// spansNamed indexes spans by name, one each.
func spansNamed(t *testing.T, spans []otlptest.Span) map[string]otlptest.Span {
	t.Helper()
	out := map[string]otlptest.Span{}
	for _, s := range spans {
		_, dup := out[s.Name]
		require.Falsef(t, dup, "one %s span", s.Name)
		out[s.Name] = s
	}
	return out
}

// tracedRun is a receiver and a config file named p.yaml in a directory of its own.
func tracedRun(t *testing.T, config string) (recv *otlptest.Receiver, cfg, dir string) {
	t.Helper()
	recv = otlptest.NewReceiver()
	t.Cleanup(recv.Close)
	dir = t.TempDir()
	cfg = filepath.Join(dir, "p.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(config), 0o600))
	return recv, cfg, dir
}

// pageRows are the rows of each page event of span, in order.
func pageRows(span otlptest.Span) []string {
	var rows []string
	for _, e := range span.Events {
		if e.Name == "page" {
			rows = append(rows, e.Attrs["rows"])
		}
	}
	return rows
}

// `sluice run --otlp-endpoint` traces a local run as serve traces a claimed one (SPEC
// §14.6): a run.attempt span with each confirmed page as an event and a finish span under
// it, exported before the command returns — the receiver holds them the moment run exits,
// with no waiting.
func TestRunExportsItsTraceBeforeExit(t *testing.T) {
	t.Parallel()
	recv, cfg, dir := tracedRun(t, `version: 1
name: traced-local
pipeline:
  source: {type: generate, config: {count: 25, batch_size: 10}}
  sink: {type: file, config: {path: out.csv}}
`)

	code, _, stderr := run(t, map[string]string{"SLUICE_DATA_DIR": filepath.Join(dir, "data")},
		"run", cfg, "--quiet", "--otlp-endpoint", recv.URL)
	require.Equal(t, 0, code, stderr)

	byName := spansNamed(t, recv.Spans())
	attempt, finish := byName["run.attempt"], byName["finish"]
	require.NotEmpty(t, attempt.SpanID, "a run.attempt span was exported before exit; got %v", keys(byName))
	require.NotEmpty(t, finish.SpanID, "a finish span was exported before exit")
	require.Equal(t, "traced-local", attempt.Attrs["pipeline"])
	require.Equal(t, "1", attempt.Attrs["attempt"])
	require.Equal(t, "completed", attempt.Attrs["status"])
	require.Equal(t, "25", attempt.Attrs["rows_written"])
	require.Equal(t, "sluice", attempt.Resource["service.name"])
	require.NotEmpty(t, attempt.Resource["service.instance.id"])
	require.Equal(t, []string{"10", "10", "5"}, pageRows(attempt), "each confirmed page is an event of the attempt")
	require.Equal(t, attempt.SpanID, finish.ParentID)
	require.Equal(t, attempt.TraceID, finish.TraceID)
	require.Equal(t, "completed", finish.Attrs["status"])
	require.False(t, finish.Failed)
}

// OTEL_EXPORTER_OTLP_ENDPOINT turns it on too; a failed run's spans say why, and a value
// that is not an http(s) URL is refused before anything runs.
func TestRunTracesAFailureFromTheOTelVariable(t *testing.T) {
	t.Parallel()
	recv, cfg, dir := tracedRun(t, `version: 1
name: broken-local
pipeline:
  source: {type: file, config: {path: missing.csv}}
  sink: {type: file, config: {path: out.csv}}
`)
	env := map[string]string{"SLUICE_DATA_DIR": filepath.Join(dir, "data"), "OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}

	code, _, stderr := run(t, env, "run", cfg, "--quiet")
	require.Equal(t, 1, code, stderr)
	byName := spansNamed(t, recv.Spans())
	attempt, finish := byName["run.attempt"], byName["finish"]
	require.NotEmpty(t, finish.SpanID, "got %v", keys(byName))
	for _, s := range []otlptest.Span{attempt, finish} {
		require.Equal(t, "failed", s.Attrs["status"], s.Name)
		require.NotEmpty(t, s.Attrs["error_code"], s.Name)
		require.True(t, s.Failed, s.Name)
		require.Contains(t, s.Message, "missing.csv", s.Name)
	}

	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "collector:4318"
	code, _, stderr = run(t, env, "run", cfg, "--quiet")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "--otlp-endpoint")
	require.Contains(t, stderr, "OTEL_EXPORTER_OTLP_ENDPOINT")
}
