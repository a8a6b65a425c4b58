package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/metrics"
)

// newMetrics is a Metrics with the default options.
func newMetrics() *metrics.Metrics {
	return metrics.New(metrics.Options{MaxPipelines: metrics.DefaultMaxPipelines})
}

// scrape fetches the handler's text exposition and parses it.
func scrape(t *testing.T, m *metrics.Metrics) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err)
	return string(body), fams
}

// find returns the metric of family name whose labels are exactly labels.
func find(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	fam, ok := fams[name]
	require.Truef(t, ok, "family %s missing", name)
	for _, m := range fam.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		if len(got) == len(labels) {
			match := true
			for k, v := range labels {
				if got[k] != v {
					match = false
				}
			}
			if match {
				return m
			}
		}
	}
	require.Failf(t, "series missing", "%s%v", name, labels)
	return nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return -1
}

func TestFamiliesCarryTheirLabelsAndValues(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	m.SetCluster(true, 3)
	m.RunClaimed("gpu", 1500*time.Millisecond)
	m.RunClaimed("gpu", 500*time.Millisecond)
	m.RunClaimed("default", time.Second)
	m.RunFinished("orders", "completed", "ok")
	m.RunFinished("orders", "failed", "poisoned")
	m.RunFinished("orders", "completed", "ok")
	m.InFlight(4)
	m.Reclaimed("requeued")
	m.HistoryUnreachable(true)
	m.ShardClaimed()
	m.ShardClaimed()
	m.ShardReclaimed("failed")
	m.RunsPerClaim(5)
	m.RunsPerClaim(1)
	m.RunsPerFinish(64)
	m.ScheduleTick("created")
	m.PipelinePage("orders", "postgres", "read", 100)
	m.PipelinePage("orders", "postgres", "read", 50)
	m.PipelinePage("orders", "file", "write", 150)
	m.Observe("GET", "/v1/runs/:id", 200, 20*time.Millisecond)
	m.Observe("POST", "/v1/runs", 202, 5*time.Millisecond)
	m.SetPendingSource(func(context.Context) (map[string]int, error) {
		return map[string]int{"default": 7, "gpu": 0}, nil
	})

	_, fams := scrape(t, m)
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
		typ    dto.MetricType
	}{
		{"sluice_serve_cluster_enabled", nil, 1, dto.MetricType_GAUGE},
		{"sluice_serve_cluster_instances", nil, 3, dto.MetricType_GAUGE},
		{"sluice_serve_runs_claimed_total", nil, 3, dto.MetricType_COUNTER},
		{"sluice_serve_runs_reclaimed_total", map[string]string{"outcome": "requeued"}, 1, dto.MetricType_COUNTER},
		{"sluice_serve_runs_reclaimed_total", map[string]string{"outcome": "failed"}, 0, dto.MetricType_COUNTER},
		{"sluice_serve_runs_pending", map[string]string{"pool": "default"}, 7, dto.MetricType_GAUGE},
		{"sluice_serve_runs_pending", map[string]string{"pool": "gpu"}, 0, dto.MetricType_GAUGE},
		{"sluice_serve_runs_total", map[string]string{"pipeline": "orders", "status": "completed", "reason": "ok"}, 2, dto.MetricType_COUNTER},
		{"sluice_serve_runs_total", map[string]string{"pipeline": "orders", "status": "failed", "reason": "poisoned"}, 1, dto.MetricType_COUNTER},
		{"sluice_serve_runs_total", map[string]string{"pipeline": "orders", "status": "failed", "reason": "error"}, 0, dto.MetricType_COUNTER},
		{"sluice_serve_runs_in_flight", nil, 4, dto.MetricType_GAUGE},
		{"sluice_serve_history_unreachable", nil, 1, dto.MetricType_GAUGE},
		{"sluice_serve_shards_claimed_total", nil, 2, dto.MetricType_COUNTER},
		{"sluice_serve_shards_reclaimed_total", map[string]string{"outcome": "failed"}, 1, dto.MetricType_COUNTER},
		{"sluice_serve_requests_total", map[string]string{"method": "GET", "route": "/v1/runs/:id", "status": "200"}, 1, dto.MetricType_COUNTER},
		{"sluice_serve_requests_total", map[string]string{"method": "POST", "route": "/v1/runs", "status": "202"}, 1, dto.MetricType_COUNTER},
		{"sluice_pipeline_rows_total", map[string]string{"pipeline": "orders", "connector": "postgres", "direction": "read"}, 150, dto.MetricType_COUNTER},
		{"sluice_pipeline_rows_total", map[string]string{"pipeline": "orders", "connector": "file", "direction": "write"}, 150, dto.MetricType_COUNTER},
		{"sluice_pipeline_pages_total", map[string]string{"pipeline": "orders", "connector": "postgres", "direction": "read"}, 2, dto.MetricType_COUNTER},
		{"sluice_pipeline_pages_total", map[string]string{"pipeline": "orders", "connector": "file", "direction": "write"}, 1, dto.MetricType_COUNTER},
		{"sluice_schedule_ticks_total", map[string]string{"outcome": "created"}, 1, dto.MetricType_COUNTER},
		{"sluice_schedule_ticks_total", map[string]string{"outcome": "skipped"}, 0, dto.MetricType_COUNTER},
		{"sluice_schedule_ticks_total", map[string]string{"outcome": "queued"}, 0, dto.MetricType_COUNTER},
	}
	for _, tt := range tests {
		require.Equalf(t, tt.typ, fams[tt.name].GetType(), "type of %s", tt.name)
		require.Equalf(t, tt.want, value(find(t, fams, tt.name, tt.labels)), "%s%v", tt.name, tt.labels)
	}

	// Histograms: counts and sums per label set.
	gpu := find(t, fams, "sluice_serve_claim_latency_seconds", map[string]string{"pool": "gpu"}).GetHistogram()
	require.Equal(t, dto.MetricType_HISTOGRAM, fams["sluice_serve_claim_latency_seconds"].GetType())
	require.EqualValues(t, 2, gpu.GetSampleCount())
	require.InDelta(t, 2.0, gpu.GetSampleSum(), 1e-9)
	claims := find(t, fams, "sluice_serve_claim_batch_runs", nil).GetHistogram()
	require.EqualValues(t, 2, claims.GetSampleCount())
	require.InDelta(t, 6.0, claims.GetSampleSum(), 1e-9, "runs per claim: sum over count is the mean")
	finishes := find(t, fams, "sluice_serve_finish_batch_runs", nil).GetHistogram()
	require.EqualValues(t, 1, finishes.GetSampleCount())
	require.InDelta(t, 64.0, finishes.GetSampleSum(), 1e-9)
	dur := find(t, fams, "sluice_serve_request_duration_seconds",
		map[string]string{"method": "GET", "route": "/v1/runs/:id", "status": "200"}).GetHistogram()
	require.EqualValues(t, 1, dur.GetSampleCount())
	require.InDelta(t, 0.02, dur.GetSampleSum(), 1e-9)

	// The Go runtime and process collectors are registered too.
	require.Contains(t, fams, "go_goroutines")
	require.Contains(t, fams, "process_cpu_seconds_total")
}

func TestGaugesGoBackDown(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	m.HistoryUnreachable(true)
	m.InFlight(5)
	m.SetCluster(true, 2)
	m.HistoryUnreachable(false)
	m.InFlight(0)
	m.SetCluster(false, 1)
	_, fams := scrape(t, m)
	require.Zero(t, value(find(t, fams, "sluice_serve_history_unreachable", nil)))
	require.Zero(t, value(find(t, fams, "sluice_serve_runs_in_flight", nil)))
	require.Zero(t, value(find(t, fams, "sluice_serve_cluster_enabled", nil)))
	require.Equal(t, 1.0, value(find(t, fams, "sluice_serve_cluster_instances", nil)))
}

func TestDefaultsBeforeAnyEvent(t *testing.T) {
	t.Parallel()
	_, fams := scrape(t, newMetrics())
	require.Zero(t, value(find(t, fams, "sluice_serve_cluster_enabled", nil)))
	require.Equal(t, 1.0, value(find(t, fams, "sluice_serve_cluster_instances", nil)))
	require.Zero(t, value(find(t, fams, "sluice_serve_runs_claimed_total", nil)))
	// No source set: the family is absent rather than a made-up zero.
	require.NotContains(t, fams, "sluice_serve_runs_pending")
}

func TestRunIDIsNeverALabel(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	m.RunClaimed("default", time.Second)
	m.RunFinished("p", "completed", "ok")
	m.Reclaimed("failed")
	m.ShardReclaimed("requeued")
	m.Observe("GET", "/v1/runs/:id/logs", 200, time.Millisecond)
	m.PipelinePage("p", "c", "read", 1)
	m.SetPendingSource(func(context.Context) (map[string]int, error) { return map[string]int{"default": 1}, nil })
	text, fams := scrape(t, m)
	require.NotContains(t, text, "run_id")
	for name, fam := range fams {
		for _, s := range fam.GetMetric() {
			for _, lp := range s.GetLabel() {
				require.NotEqualf(t, "run_id", lp.GetName(), "family %s", name)
			}
		}
	}
}

func TestUnknownMethodsShareOneSeries(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	m.Observe("BREW", "unmatched", 404, time.Millisecond)
	m.Observe("PROPFIND", "unmatched", 404, time.Millisecond)
	_, fams := scrape(t, m)
	s := find(t, fams, "sluice_serve_requests_total", map[string]string{"method": "other", "route": "unmatched", "status": "404"})
	require.Equal(t, 2.0, value(s))
	require.Len(t, fams["sluice_serve_requests_total"].GetMetric(), 1)
}

func TestPendingSourceFailureLeavesTheFamilyOut(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	m.SetPendingSource(func(context.Context) (map[string]int, error) {
		return nil, errors.New("history down")
	})
	_, fams := scrape(t, m)
	require.NotContains(t, fams, "sluice_serve_runs_pending")
	require.Contains(t, fams, "sluice_serve_runs_claimed_total", "other families still scrape")
}

func TestPendingSourceGetsADeadline(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	var left time.Duration
	m.SetPendingSource(func(ctx context.Context) (map[string]int, error) {
		d, ok := ctx.Deadline()
		if !ok {
			return nil, errors.New("no deadline")
		}
		left = time.Until(d)
		return map[string]int{"default": 1}, nil
	})
	_, fams := scrape(t, m)
	require.Contains(t, fams, "sluice_serve_runs_pending")
	require.Positive(t, left)
	require.LessOrEqual(t, left, 5*time.Second)
}

func TestSlowPendingSourceDoesNotHoldTheScrape(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	// Ignores its context on purpose: the collector must bound the wait itself.
	m.SetPendingSource(func(context.Context) (map[string]int, error) {
		<-release
		return map[string]int{"default": 1}, nil
	})
	// The source never returns before the test ends, so a scrape that returns at all was
	// bounded by the collector.
	_, fams := scrape(t, m)
	require.NotContains(t, fams, "sluice_serve_runs_pending")
}

func TestPendingSourceCanBeRemoved(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	m.SetPendingSource(func(context.Context) (map[string]int, error) { return map[string]int{"a": 2}, nil })
	_, fams := scrape(t, m)
	require.Equal(t, 2.0, value(find(t, fams, "sluice_serve_runs_pending", map[string]string{"pool": "a"})))
	m.SetPendingSource(nil)
	_, fams = scrape(t, m)
	require.NotContains(t, fams, "sluice_serve_runs_pending")
}

func TestEachMetricsHasItsOwnRegistry(t *testing.T) {
	t.Parallel()
	a, b := newMetrics(), newMetrics() // the global registry would panic on the second
	a.RunClaimed("default", 0)
	_, fams := scrape(t, b)
	require.Zero(t, value(find(t, fams, "sluice_serve_runs_claimed_total", nil)))
}

// A pool that had pending runs reads 0 once they are gone (the history answers only
// pools with pending runs), rather than vanishing and silencing an alert as it resolves.
func TestPendingPoolReadsZeroAfterItDrains(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	counts := map[string]int{"etl": 2}
	m.SetPendingSource(func(context.Context) (map[string]int, error) { return counts, nil })
	_, fams := scrape(t, m)
	require.Equal(t, 2.0, value(find(t, fams, "sluice_serve_runs_pending", map[string]string{"pool": "etl"})))
	counts = map[string]int{}
	_, fams = scrape(t, m)
	require.Equal(t, 0.0, value(find(t, fams, "sluice_serve_runs_pending", map[string]string{"pool": "etl"})))
}
