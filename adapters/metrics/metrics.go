package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluicehq/sluice/application/cluster"
)

// The cluster member reports through cluster.Metrics; this keeps the method sets in step.
var _ cluster.Metrics = (*Metrics)(nil)

// claimBuckets span submit → claim latencies from an idle server (milliseconds) to a
// backlog that waits for an hour; the default buckets stop at 10 s.
var claimBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}

// Metrics holds the collectors of one server on a registry of its own. Its methods are
// safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	clusterEnabled   prometheus.Gauge
	clusterInstances prometheus.Gauge

	runsClaimed     prometheus.Counter
	runsReclaimed   *prometheus.CounterVec
	runsTotal       *prometheus.CounterVec
	runsInFlight    prometheus.Gauge
	historyDown     prometheus.Gauge
	claimLatency    *prometheus.HistogramVec
	shardsClaimed   prometheus.Counter
	shardsReclaimed *prometheus.CounterVec

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec

	records *prometheus.CounterVec
	pages   *prometheus.CounterVec

	scheduleTicks *prometheus.CounterVec

	pending *pendingCollector
}

// New builds the collectors and registers them, with the Go runtime and process
// collectors, on a fresh registry.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		clusterEnabled: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_serve_cluster_enabled",
			Help: "1 when the server runs with --cluster, else 0.",
		}),
		clusterInstances: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_serve_cluster_instances",
			Help: "Live members of the cluster as this member sees them (1 without --cluster).",
		}),
		runsClaimed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_serve_runs_claimed_total",
			Help: "Runs this member claimed.",
		}),
		runsReclaimed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_serve_runs_reclaimed_total",
			Help: "Runs whose lease expired and that this member reclaimed, by outcome.",
		}, []string{"outcome"}),
		runsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_serve_runs_total",
			Help: "Terminal transitions made by this member, by status and reason.",
		}, []string{"status", "reason"}),
		runsInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_serve_runs_in_flight",
			Help: "Runs executing on this member.",
		}),
		historyDown: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_serve_history_unreachable",
			Help: "1 while this member cannot renew its leases in the history, else 0.",
		}),
		claimLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_serve_claim_latency_seconds",
			Help:    "Time from submit to claim of the runs this member claimed, by pool.",
			Buckets: claimBuckets,
		}, []string{"pool"}),
		shardsClaimed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_serve_shards_claimed_total",
			Help: "Shards this member claimed.",
		}),
		shardsReclaimed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_serve_shards_reclaimed_total",
			Help: "Shards whose lease expired and that this member reclaimed, by outcome.",
		}, []string{"outcome"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_serve_requests_total",
			Help: "HTTP requests answered, by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_serve_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by method, route pattern and status.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route", "status"}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_pipeline_records_total",
			Help: "Records moved by pipelines on this member, by pipeline, connector and direction.",
		}, []string{"pipeline", "connector", "direction"}),
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_pipeline_pages_total",
			Help: "Pages moved by pipelines on this member, by pipeline, connector and direction.",
		}, []string{"pipeline", "connector", "direction"}),
		scheduleTicks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_schedule_ticks_total",
			Help: "Schedule ticks handled by this member, by outcome.",
		}, []string{"outcome"}),
		pending: newPendingCollector(),
	}
	// Known outcomes start at zero so rate() and absent() work before the first event.
	for _, o := range []string{"requeued", "failed", "cancelled"} {
		m.runsReclaimed.WithLabelValues(o)
		m.shardsReclaimed.WithLabelValues(o)
	}
	for _, o := range []string{"created", "skipped", "queued"} {
		m.scheduleTicks.WithLabelValues(o)
	}
	m.clusterInstances.Set(1)
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.clusterEnabled, m.clusterInstances,
		m.runsClaimed, m.runsReclaimed, m.runsTotal, m.runsInFlight, m.historyDown,
		m.claimLatency, m.shardsClaimed, m.shardsReclaimed,
		m.requests, m.requestDuration,
		m.records, m.pages,
		m.scheduleTicks,
		m.pending,
	)
	return m
}

// Handler serves this registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// Counts failed scrapes on this registry, not the global one.
		Registry: m.reg,
	})
}
