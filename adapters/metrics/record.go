package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// SetCluster reports whether the server runs with --cluster and how many live members
// it sees.
func (m *Metrics) SetCluster(enabled bool, instances int) {
	m.clusterEnabled.Set(boolValue(enabled))
	m.clusterInstances.Set(float64(instances))
}

// RunClaimed counts one claimed run; latency is submit → claim.
func (m *Metrics) RunClaimed(pool string, latency time.Duration) {
	m.runsClaimed.Inc()
	m.claimLatency.WithLabelValues(pool).Observe(max(latency, 0).Seconds())
}

// RunFinished counts one terminal transition of a run of pipeline by status and reason;
// a completed run also moves the pipeline's last-success time to now.
func (m *Metrics) RunFinished(pipeline, status, reason string) {
	label := m.pipelines.label(pipeline)
	m.runsTotal.WithLabelValues(label, status, reason).Inc()
	if status == "completed" {
		m.lastSuccess.WithLabelValues(label).Set(float64(m.now().UnixNano()) / 1e9)
	}
}

// RunDuration observes the running time (every attempt) of a run this member finished.
func (m *Metrics) RunDuration(pipeline, status string, ran time.Duration) {
	m.runDuration.WithLabelValues(m.pipelines.label(pipeline), status).Observe(max(ran, 0).Seconds())
}

// PipelineConnectors announces the connectors of a run about to move pages, so the
// pipeline's row and page series exist at zero before its first page.
func (m *Metrics) PipelineConnectors(pipeline, source, sink string) {
	label := m.pipelines.label(pipeline)
	for _, s := range []struct{ connector, direction string }{{source, "read"}, {sink, "write"}} {
		m.pages.WithLabelValues(label, s.connector, s.direction)
		m.rows.WithLabelValues(label, s.connector, s.direction)
	}
}

// RunRetried counts one failed attempt sent back to pending for a retry.
func (m *Metrics) RunRetried(pipeline string) {
	m.runsRetried.WithLabelValues(m.pipelines.label(pipeline)).Inc()
}

// RunsPerClaim observes the runs one claim statement took.
func (m *Metrics) RunsPerClaim(n int) { m.claimBatch.Observe(float64(n)) }

// RunsPerFinish observes the runs one finish transaction ended.
func (m *Metrics) RunsPerFinish(n int) { m.finishBatch.Observe(float64(n)) }

// InFlight reports how many runs execute on this member.
func (m *Metrics) InFlight(n int) { m.runsInFlight.Set(float64(n)) }

// Reclaimed counts one reclaimed run by outcome (requeued | failed | cancelled).
func (m *Metrics) Reclaimed(outcome string) { m.runsReclaimed.WithLabelValues(outcome).Inc() }

// HistoryUnreachable reports whether this member's lease renewal is failing.
func (m *Metrics) HistoryUnreachable(unreachable bool) { m.historyDown.Set(boolValue(unreachable)) }

// ShardClaimed counts one claimed shard.
func (m *Metrics) ShardClaimed() { m.shardsClaimed.Inc() }

// ShardReclaimed counts one reclaimed shard by outcome.
func (m *Metrics) ShardReclaimed(outcome string) { m.shardsReclaimed.WithLabelValues(outcome).Inc() }

// ScheduleTick counts one schedule tick by outcome (created | skipped | queued).
func (m *Metrics) ScheduleTick(outcome string) { m.scheduleTicks.WithLabelValues(outcome).Inc() }

// PipelinePage counts one page of rows moved by a pipeline's connector; direction is
// "read" for a source and "write" for a sink.
func (m *Metrics) PipelinePage(pipeline, connector, direction string, rows int) {
	label := m.pipelines.label(pipeline)
	m.pages.WithLabelValues(label, connector, direction).Inc()
	c := m.rows.WithLabelValues(label, connector, direction)
	if rows > 0 {
		c.Add(float64(rows))
	}
}

// Observe records one answered HTTP request. route must be the route pattern (the http
// adapter passes it), never the raw path, so ids cannot become label values.
func (m *Metrics) Observe(method, route string, status int, dur time.Duration) {
	labels := []string{knownMethod(method), route, strconv.Itoa(status)}
	m.requests.WithLabelValues(labels...).Inc()
	m.requestDuration.WithLabelValues(labels...).Observe(max(dur, 0).Seconds())
}

// SetPendingSource sets what sluice_serve_runs_pending reads at each scrape (pending
// runs per pool, from the history). Nil stops reporting the family.
func (m *Metrics) SetPendingSource(src func(ctx context.Context) (map[string]int, error)) {
	m.pending.setSource(src)
}

// knownMethod maps a client-chosen method outside the standard set to "other": any
// string is a valid method on the wire, and each would be a new series.
func knownMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return "other"
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
