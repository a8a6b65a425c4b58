package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/domain/schedule"
)

// The cluster member reports through cluster.Metrics; this keeps the method sets in step.
var _ cluster.Metrics = (*Metrics)(nil)

// claimBuckets span submit → claim latencies from an idle server (milliseconds) to a
// backlog that waits for an hour; the default buckets stop at 10 s.
var claimBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}

// batchBuckets span the runs of one claim or finish transaction: 1 on an idle member, up
// to a claim of every free slot (--max-concurrent-runs) or a finish batch's 64.
var batchBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}

// durationBuckets span run durations from a trivial run (milliseconds) to a nightly
// load of several hours.
var durationBuckets = []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 43200}

// Build names the binary in sluice_build_info.
type Build struct {
	Version, Commit, GoVersion string
}

// Options configure New.
type Options struct {
	// MaxPipelines caps the distinct pipeline labels (--metrics-max-pipelines); the rest
	// are exported as OtherPipeline. 0 puts every pipeline under OtherPipeline.
	MaxPipelines int
	Build        Build
	// Pools are the pools this server serves: their pending gauge is exported at 0 from
	// the first scrape, before any run was ever pending there.
	Pools []string
	// Now is the clock of the last-success gauge; nil is time.Now.
	Now func() time.Time
}

// Metrics holds the collectors of one server on a registry of its own. Its methods are
// safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	clusterEnabled   prometheus.Gauge
	clusterInstances prometheus.Gauge

	runsClaimed     prometheus.Counter
	runsReclaimed   *prometheus.CounterVec
	runsTotal       *prometheus.CounterVec
	runsRetried     *prometheus.CounterVec
	runsInFlight    prometheus.Gauge
	historyDown     prometheus.Gauge
	claimLatency    *prometheus.HistogramVec
	claimBatch      prometheus.Histogram
	finishBatch     prometheus.Histogram
	shardsClaimed   prometheus.Counter
	shardsReclaimed *prometheus.CounterVec

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec

	rows        *prometheus.CounterVec
	pages       *prometheus.CounterVec
	runDuration *prometheus.HistogramVec
	lastSuccess *prometheus.GaugeVec
	pipelines   *pipelines

	scheduleTicks *prometheus.CounterVec
	buildInfo     *prometheus.GaugeVec

	pending *pendingCollector
	now     func() time.Time
}

// New builds the collectors and registers them, with the Go runtime and process
// collectors, on a fresh registry.
func New(opts Options) *Metrics {
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
			Help: "Terminal transitions made by this member, by pipeline, status and reason.",
		}, []string{"pipeline", "status", "reason"}),
		runsRetried: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_serve_run_retries_total",
			Help: "Failed attempts of runs (or of their shards) this member sent back to pending for a retry, by pipeline.",
		}, []string{"pipeline"}),
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
		claimBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sluice_serve_claim_batch_runs",
			Help:    "Runs taken by each claim statement of this member.",
			Buckets: batchBuckets,
		}),
		finishBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sluice_serve_finish_batch_runs",
			Help:    "Runs ended by each finish transaction of this member's group commit.",
			Buckets: batchBuckets,
		}),
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
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_pipeline_rows_total",
			Help: "Rows moved by pipelines on this member, by pipeline, connector and direction (read: handed over by the source; write: confirmed by the sink).",
		}, []string{"pipeline", "connector", "direction"}),
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_pipeline_pages_total",
			Help: "Pages moved by pipelines on this member, by pipeline, connector and direction.",
		}, []string{"pipeline", "connector", "direction"}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_run_duration_seconds",
			Help:    "Running time (all attempts) of the runs this member finished, by pipeline and status.",
			Buckets: durationBuckets,
		}, []string{"pipeline", "status"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_pipeline_last_success_timestamp_seconds",
			Help: "Unix time of the newest run of the pipeline this member completed; 0 until one does (use max by (pipeline) across members).",
		}, []string{"pipeline"}),
		scheduleTicks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_schedule_ticks_total",
			Help: "Schedule ticks handled by this member, by outcome.",
		}, []string{"outcome"}),
		buildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sluice_build_info",
			Help: "Always 1; the labels name the binary's version, VCS commit and Go release.",
		}, []string{"version", "commit", "go"}),
		pending: newPendingCollector(opts.Pools),
	}
	m.now = opts.Now
	if m.now == nil {
		m.now = time.Now
	}
	m.pipelines = newPipelines(opts.MaxPipelines, m.zeroPipeline)
	m.buildInfo.WithLabelValues(opts.Build.Version, opts.Build.Commit, opts.Build.GoVersion).Set(1)
	// Known outcomes start at zero so rate() and absent() work before the first event.
	for _, o := range []string{"requeued", "failed", "cancelled"} {
		m.runsReclaimed.WithLabelValues(o)
		m.shardsReclaimed.WithLabelValues(o)
	}
	for _, o := range schedule.Outcomes() {
		m.scheduleTicks.WithLabelValues(string(o))
	}
	m.clusterInstances.Set(1)
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.clusterEnabled, m.clusterInstances,
		m.runsClaimed, m.runsReclaimed, m.runsTotal, m.runsRetried, m.runsInFlight, m.historyDown,
		m.claimLatency, m.claimBatch, m.finishBatch, m.shardsClaimed, m.shardsReclaimed,
		m.requests, m.requestDuration,
		m.rows, m.pages, m.runDuration, m.lastSuccess,
		m.scheduleTicks, m.buildInfo,
		m.pending,
	)
	return m
}

// zeroPipeline creates the series of a newly known pipeline label at zero: the outcomes
// an alert divides by or waits for must exist before the first of them happens.
func (m *Metrics) zeroPipeline(label string) {
	for _, o := range knownOutcomes {
		m.runsTotal.WithLabelValues(label, o.status, o.reason)
	}
	for _, st := range []string{"completed", "failed", "cancelled"} {
		m.runDuration.WithLabelValues(label, st)
	}
	m.lastSuccess.WithLabelValues(label)
	m.runsRetried.WithLabelValues(label)
}

// knownOutcomes are the (status, reason) pairs of sluice_serve_runs_total every known
// pipeline exports from the start; rarer reasons appear when they first happen.
var knownOutcomes = []struct{ status, reason string }{
	{"completed", "ok"}, {"failed", "error"}, {"failed", "timeout"}, {"failed", "poisoned"}, {"cancelled", "cancelled"},
}

// Handler serves this registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// Counts failed scrapes on this registry, not the global one.
		Registry: m.reg,
	})
}
