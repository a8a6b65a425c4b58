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

// RunFinished counts one terminal transition by status and reason.
func (m *Metrics) RunFinished(status, reason string) {
	m.runsTotal.WithLabelValues(status, reason).Inc()
}

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

// PipelinePage counts one page of records moved by a pipeline's connector; direction is
// "read" for a source and "write" for a sink.
func (m *Metrics) PipelinePage(pipeline, connector, direction string, records int) {
	m.pages.WithLabelValues(pipeline, connector, direction).Inc()
	if records > 0 {
		m.records.WithLabelValues(pipeline, connector, direction).Add(float64(records))
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
