package e2e_test

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// scrapeMetrics reads /metrics of s (open, like a Prometheus scrape) and parses it.
func scrapeMetrics(t *testing.T, s *server) ([]byte, map[string]*dto.MetricFamily) {
	t.Helper()
	code, raw := s.call(t, "GET", "/metrics", "", nil)
	require.Equal(t, http.StatusOK, code)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(raw))
	require.NoError(t, err)
	return raw, fams
}

// series is one metric of a family with exactly the given labels, or nil.
func series(fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	for _, m := range fams[name].GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		if len(got) != len(labels) {
			continue
		}
		match := true
		for k, v := range labels {
			match = match && got[k] == v
		}
		if match {
			return m
		}
	}
	return nil
}

// sampleValue is a counter's or gauge's value; it fails when the series is missing.
func sampleValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := series(fams, name, labels)
	require.NotNilf(t, m, "series %s%v missing", name, labels)
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

// TestServeMetricsAfterRuns runs pipelines on a real server and reads every §14.6
// family back from /metrics: label sets, values, the pipeline cap, pending pools at 0.
func TestServeMetricsAfterRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil,
		"--metrics-max-pipelines", "2", "--pool", "default", "--pool", "gpu")

	const rows, batch = 900, 400 // 3 pages per run
	for i, name := range []string{"orders", "orders"} {
		db := filepath.Join(dir, name+string(rune('a'+i))+".db")
		id := s.submit(t, map[string]any{"config": generateConfig(name, db, rows, 0, batch, "")})
		s.waitStatus(t, id, "completed", time.Minute)
	}
	// A sink table that does not exist (create_table: false) fails the run when it opens.
	broken := strings.Replace(generateConfig("broken", filepath.Join(dir, "broken.db"), 10, 0, 10, ""),
		"create_table: true", "create_table: false", 1)
	failed := s.waitStatus(t, s.submit(t, map[string]any{"config": broken}), "failed", time.Minute)
	// A third pipeline is past --metrics-max-pipelines 2.
	id := s.submit(t, map[string]any{"config": generateConfig("extra", filepath.Join(dir, "extra.db"), 10, 0, 10, "")})
	s.waitStatus(t, id, "completed", time.Minute)

	// A run's counters move just after its finish commits, and its slot is freed after
	// that: a scrape right after the completed answer can come a moment early on a loaded
	// machine, so read the counters once nothing is in flight.
	var raw []byte
	var fams map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		raw, fams = scrapeMetrics(t, s)
		return sampleValue(t, fams, "sluice_serve_runs_in_flight", nil) == 0
	}, time.Minute, 20*time.Millisecond, "a run still in flight after every run ended")
	type sample struct {
		name   string
		labels map[string]string
		want   float64
	}
	counters := []sample{
		{"sluice_serve_runs_total", map[string]string{"pipeline": "orders", "status": "completed", "reason": "ok"}, 2},
		{"sluice_serve_runs_total", map[string]string{"pipeline": "orders", "status": "failed", "reason": "error"}, 0},
		{"sluice_serve_runs_total", map[string]string{"pipeline": "orders", "status": "cancelled", "reason": "cancelled"}, 0},
		{"sluice_serve_runs_total", map[string]string{"pipeline": "broken", "status": "failed", "reason": "error"}, 1},
		{"sluice_serve_runs_total", map[string]string{"pipeline": "broken", "status": "completed", "reason": "ok"}, 0},
		{"sluice_serve_runs_total", map[string]string{"pipeline": "_other", "status": "completed", "reason": "ok"}, 1},
		{"sluice_pipeline_rows_total", map[string]string{"pipeline": "orders", "connector": "generate", "direction": "read"}, 2 * rows},
		{"sluice_pipeline_rows_total", map[string]string{"pipeline": "orders", "connector": "sqlite", "direction": "write"}, 2 * rows},
		{"sluice_pipeline_pages_total", map[string]string{"pipeline": "orders", "connector": "generate", "direction": "read"}, 6},
		{"sluice_pipeline_pages_total", map[string]string{"pipeline": "orders", "connector": "sqlite", "direction": "write"}, 6},
		{"sluice_pipeline_rows_total", map[string]string{"pipeline": "_other", "connector": "sqlite", "direction": "write"}, 10},
		{"sluice_pipeline_last_success_timestamp_seconds", map[string]string{"pipeline": "broken"}, 0},
		{"sluice_serve_runs_pending", map[string]string{"pool": "default"}, 0},
		{"sluice_serve_runs_pending", map[string]string{"pool": "gpu"}, 0},
		{"sluice_serve_runs_claimed_total", nil, 4},
		{"sluice_serve_runs_in_flight", nil, 0},
		{"sluice_serve_cluster_enabled", nil, 0},
		{"sluice_serve_cluster_instances", nil, 1},
		{"sluice_serve_shards_claimed_total", nil, 0},
		{"sluice_serve_requests_total", map[string]string{"method": "POST", "route": "/v1/runs", "status": "202"}, 4},
	}
	for _, o := range []string{"requeued", "failed", "cancelled"} {
		counters = append(counters,
			sample{"sluice_serve_runs_reclaimed_total", map[string]string{"outcome": o}, 0},
			sample{"sluice_serve_shards_reclaimed_total", map[string]string{"outcome": o}, 0})
	}
	for _, o := range []string{"created", "skipped", "queued"} {
		counters = append(counters, sample{"sluice_schedule_ticks_total", map[string]string{"outcome": o}, 0})
	}
	for _, c := range counters {
		require.Equalf(t, c.want, sampleValue(t, fams, c.name, c.labels), "%s%v (failed run: %+v)", c.name, c.labels, failed.Error)
	}
	require.ElementsMatch(t, []string{"orders", "broken", "_other"}, labelValues(fams["sluice_serve_runs_total"], "pipeline"),
		"no fourth pipeline label past the cap")

	last := sampleValue(t, fams, "sluice_pipeline_last_success_timestamp_seconds", map[string]string{"pipeline": "orders"})
	require.InDelta(t, float64(time.Now().Unix()), last, 300, "the last success is a Unix time of this test")
	dur := series(fams, "sluice_run_duration_seconds", map[string]string{"pipeline": "orders", "status": "completed"})
	require.NotNil(t, dur)
	require.Equal(t, dto.MetricType_HISTOGRAM, fams["sluice_run_duration_seconds"].GetType())
	require.EqualValues(t, 2, dur.GetHistogram().GetSampleCount())
	require.EqualValues(t, 1, series(fams, "sluice_run_duration_seconds",
		map[string]string{"pipeline": "broken", "status": "failed"}).GetHistogram().GetSampleCount())

	// A renewal that a loaded machine delays past its statement timeout sets it for a
	// moment: the family is checked for its shape, not a value.
	require.Contains(t, []float64{0, 1}, sampleValue(t, fams, "sluice_serve_history_unreachable", nil))
	claims := series(fams, "sluice_serve_claim_latency_seconds", map[string]string{"pool": "default"})
	require.NotNil(t, claims, "claim latency of the default pool")
	require.EqualValues(t, 4, claims.GetHistogram().GetSampleCount(), "one observation per claimed run")
	for _, name := range []string{"sluice_serve_claim_batch_runs", "sluice_serve_finish_batch_runs"} {
		h := series(fams, name, nil).GetHistogram()
		require.Positive(t, h.GetSampleCount(), name)
		require.EqualValues(t, 4, h.GetSampleSum(), "%s: the batches add up to the four runs", name)
	}
	posts := series(fams, "sluice_serve_request_duration_seconds", map[string]string{"method": "POST", "route": "/v1/runs", "status": "202"})
	require.NotNil(t, posts)
	require.EqualValues(t, 4, posts.GetHistogram().GetSampleCount())
	require.Positive(t, sampleValue(t, fams, "sluice_serve_requests_total",
		map[string]string{"method": "GET", "route": "/v1/runs/:id", "status": "200"}), "the status polls, by route pattern")

	info := fams["sluice_build_info"].GetMetric()
	require.Len(t, info, 1)
	labels := map[string]string{}
	for _, lp := range info[0].GetLabel() {
		labels[lp.GetName()] = lp.GetValue()
	}
	require.Equal(t, runtime.Version(), labels["go"], "the e2e binary is built by this toolchain")
	require.NotEmpty(t, labels["version"])
	require.Equal(t, 1.0, info[0].GetGauge().GetValue())

	// After the runs nothing is pending, yet every pool still reports.
	require.Len(t, fams["sluice_serve_runs_pending"].GetMetric(), 2)
	promtoolCheckMetrics(t, raw)
	s.stop(t)
}

func labelValues(fam *dto.MetricFamily, name string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range fam.GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == name && !seen[lp.GetValue()] {
				seen[lp.GetValue()] = true
				out = append(out, lp.GetValue())
			}
		}
	}
	return out
}

// promtoolCheckMetrics lints an exposition with `promtool check metrics`. CI installs
// promtool (.ci/run); elsewhere a machine without it cannot run this part.
func promtoolCheckMetrics(t *testing.T, exposition []byte) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		require.Empty(t, os.Getenv("CI"), "promtool is missing; .ci/run installs the Debian prometheus package")
		t.Log("promtool not installed: the exposition was not linted")
		return
	}
	cmd := exec.Command(bin, "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	require.NoErrorf(t, err, "promtool check metrics:\n%s", out)
}

// TestServeGCHeapFloor reads the collector's pacing off /metrics (go_gc_gogc_percent):
// raised by the default --gc-heap-floor-mib while the live heap is small, Go's own 100
// with --gc-heap-floor-mib 0, and whatever GOGC says when it is set.
func TestServeGCHeapFloor(t *testing.T) {
	t.Parallel()
	gogc := func(s *server) float64 {
		_, fams := scrapeMetrics(t, s)
		return sampleValue(t, fams, "go_gc_gogc_percent", nil)
	}
	dir := t.TempDir()
	floored := startServe(t, filepath.Join(dir, "a"), map[string]string{"GOGC": ""})
	require.Greater(t, gogc(floored), 100.0, "the default floor did not raise GOGC over a small live heap")
	off := startServe(t, filepath.Join(dir, "b"), map[string]string{"GOGC": ""}, "--gc-heap-floor-mib", "0")
	require.Equal(t, 100.0, gogc(off))
	chosen := startServe(t, filepath.Join(dir, "c"), map[string]string{"GOGC": "50"})
	require.Equal(t, 50.0, gogc(chosen))
	require.Contains(t, chosen.Stderr(), "GOGC is set: --gc-heap-floor-mib is ignored")
}
