package metrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/metrics"
)

// pipelinesOf lists the pipeline label values of a family.
func pipelinesOf(fams map[string]*dto.MetricFamily, name string) map[string]bool {
	out := map[string]bool{}
	for _, m := range fams[name].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "pipeline" {
				out[lp.GetValue()] = true
			}
		}
	}
	return out
}

func TestPipelineLabelsAreCappedAndTheRestAreOther(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{MaxPipelines: 2})
	for i := range 5 {
		name := fmt.Sprintf("p%d", i)
		m.RunFinished(name, "completed", "ok")
		m.PipelinePage(name, "generate", "read", 10)
	}
	m.RunFinished("p0", "completed", "ok") // a known name keeps its label after the cap is reached
	m.RunFinished("", "failed", "shard_failed")
	m.RunFinished("p1", "completed", "ok") // the unknown label took no slot

	_, fams := scrape(t, m)
	want := map[string]bool{"p0": true, "p1": true, metrics.OtherPipeline: true, metrics.UnknownPipeline: true}
	for _, fam := range []string{"sluice_serve_runs_total", "sluice_pipeline_last_success_timestamp_seconds", "sluice_run_duration_seconds"} {
		require.Equalf(t, want, pipelinesOf(fams, fam), "pipeline labels of %s", fam)
	}
	delete(want, metrics.UnknownPipeline) // pages always come with a name
	for _, fam := range []string{"sluice_pipeline_rows_total", "sluice_pipeline_pages_total"} {
		require.Equalf(t, want, pipelinesOf(fams, fam), "pipeline labels of %s", fam)
	}
	require.Equal(t, 1.0, value(find(t, fams, "sluice_serve_runs_total",
		map[string]string{"pipeline": metrics.UnknownPipeline, "status": "failed", "reason": "shard_failed"})))
	require.Equal(t, 2.0, value(find(t, fams, "sluice_serve_runs_total",
		map[string]string{"pipeline": "p0", "status": "completed", "reason": "ok"})))
	require.Equal(t, 2.0, value(find(t, fams, "sluice_serve_runs_total",
		map[string]string{"pipeline": "p1", "status": "completed", "reason": "ok"})))
	require.Equal(t, 3.0, value(find(t, fams, "sluice_serve_runs_total",
		map[string]string{"pipeline": metrics.OtherPipeline, "status": "completed", "reason": "ok"})))
	require.Equal(t, 30.0, value(find(t, fams, "sluice_pipeline_rows_total",
		map[string]string{"pipeline": metrics.OtherPipeline, "connector": "generate", "direction": "read"})))
}

func TestAKnownPipelineExportsItsSeriesAtZero(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	m.PipelineConnectors("orders", "generate", "file")

	_, fams := scrape(t, m)
	for _, labels := range []map[string]string{
		{"pipeline": "orders", "status": "completed", "reason": "ok"},
		{"pipeline": "orders", "status": "failed", "reason": "error"},
		{"pipeline": "orders", "status": "failed", "reason": "timeout"},
		{"pipeline": "orders", "status": "failed", "reason": "poisoned"},
		{"pipeline": "orders", "status": "cancelled", "reason": "cancelled"},
	} {
		require.Zero(t, value(find(t, fams, "sluice_serve_runs_total", labels)))
	}
	for _, labels := range []map[string]string{
		{"pipeline": "orders", "connector": "generate", "direction": "read"},
		{"pipeline": "orders", "connector": "file", "direction": "write"},
	} {
		require.Zero(t, value(find(t, fams, "sluice_pipeline_rows_total", labels)))
		require.Zero(t, value(find(t, fams, "sluice_pipeline_pages_total", labels)))
	}
	require.Zero(t, value(find(t, fams, "sluice_pipeline_last_success_timestamp_seconds", map[string]string{"pipeline": "orders"})))
	for _, st := range []string{"completed", "failed", "cancelled"} {
		h := find(t, fams, "sluice_run_duration_seconds", map[string]string{"pipeline": "orders", "status": st}).GetHistogram()
		require.Zero(t, h.GetSampleCount())
	}
}

func TestRunDurationAndLastSuccess(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 3, 12, 0, 0, 500_000_000, time.UTC)
	m := metrics.New(metrics.Options{MaxPipelines: 10, Now: func() time.Time { return at }})
	m.RunFinished("orders", "failed", "error")
	m.RunDuration("orders", "failed", 3*time.Second)
	_, fams := scrape(t, m)
	require.Zero(t, value(find(t, fams, "sluice_pipeline_last_success_timestamp_seconds", map[string]string{"pipeline": "orders"})),
		"a failure is no success")

	m.RunFinished("orders", "completed", "ok")
	m.RunDuration("orders", "completed", 90*time.Second)
	_, fams = scrape(t, m)
	require.Equal(t, dto.MetricType_HISTOGRAM, fams["sluice_run_duration_seconds"].GetType())
	h := find(t, fams, "sluice_run_duration_seconds", map[string]string{"pipeline": "orders", "status": "completed"}).GetHistogram()
	require.EqualValues(t, 1, h.GetSampleCount())
	require.InDelta(t, 90.0, h.GetSampleSum(), 1e-9)
	require.InDelta(t, float64(at.UnixNano())/1e9,
		value(find(t, fams, "sluice_pipeline_last_success_timestamp_seconds", map[string]string{"pipeline": "orders"})), 1e-3)
}

func TestPendingPoolStaysAtZeroOnceSeen(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{Pools: []string{"default"}})
	counts := map[string]int{"gpu": 3}
	m.SetPendingSource(func(context.Context) (map[string]int, error) { return counts, nil })
	_, fams := scrape(t, m)
	require.Equal(t, 3.0, value(find(t, fams, "sluice_serve_runs_pending", map[string]string{"pool": "gpu"})))
	require.Zero(t, value(find(t, fams, "sluice_serve_runs_pending", map[string]string{"pool": "default"})),
		"a served pool is exported before any run waited there")

	counts = map[string]int{} // the history answers only pools with pending runs
	_, fams = scrape(t, m)
	require.Zero(t, value(find(t, fams, "sluice_serve_runs_pending", map[string]string{"pool": "gpu"})),
		"a pool that drained reads 0 instead of vanishing")
}

func TestBuildInfo(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{Build: metrics.Build{Version: "v1.2.3", Commit: "abc123def456", GoVersion: "go1.26.8"}})
	_, fams := scrape(t, m)
	require.Equal(t, dto.MetricType_GAUGE, fams["sluice_build_info"].GetType())
	require.Equal(t, 1.0, value(find(t, fams, "sluice_build_info",
		map[string]string{"version": "v1.2.3", "commit": "abc123def456", "go": "go1.26.8"})))
}
