package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// pendingTimeout bounds the history query a scrape makes: a slow history must not hold
// the scrape past Prometheus's own timeout (10 s by default) and lose every other family.
const pendingTimeout = 2 * time.Second

// pendingCollector reads pending runs per pool from the history at scrape time. The count
// lives in the shared history, so asking at scrape keeps every member's answer current
// without a loop of its own.
type pendingCollector struct {
	desc *prometheus.Desc

	mu  sync.Mutex
	src func(ctx context.Context) (map[string]int, error)
	// seen holds every pool reported so far and the pools this server serves. The history
	// answers only pools that have pending runs; a pool that drains to nothing must read
	// 0, not vanish, or an alert on it would go quiet exactly when it resolves.
	seen map[string]struct{}
}

func newPendingCollector(pools []string) *pendingCollector {
	c := &pendingCollector{desc: prometheus.NewDesc(
		"sluice_serve_runs_pending",
		"Pending runs in the shared history, by pool (every member reports the same).",
		[]string{"pool"}, nil,
	), seen: map[string]struct{}{}}
	for _, p := range pools {
		c.seen[p] = struct{}{}
	}
	return c
}

func (c *pendingCollector) setSource(src func(ctx context.Context) (map[string]int, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.src = src
}

// Describe implements prometheus.Collector.
func (c *pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector. When the history does not answer in time the
// family is left out of this scrape: a stale or zero count would be read as a fact, and
// sluice_serve_history_unreachable already tells the outage.
func (c *pendingCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	src := c.src
	c.mu.Unlock()
	if src == nil {
		return
	}
	// Collect has no context of its own; the scrape's request context does not reach it.
	ctx, cancel := context.WithTimeout(context.Background(), pendingTimeout)
	defer cancel()
	type answer struct {
		counts map[string]int
		err    error
	}
	// The source runs aside so a query that ignores its context still cannot hold the
	// scrape past the timeout; the buffered channel lets it finish and be collected later.
	done := make(chan answer, 1)
	go func() {
		counts, err := src(ctx)
		done <- answer{counts, err}
	}()
	var counts map[string]int
	select {
	case <-ctx.Done():
		return
	case a := <-done:
		if a.err != nil {
			return
		}
		counts = a.counts
	}
	for pool, n := range c.withSeen(counts) {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), pool)
	}
}

// withSeen remembers the pools of counts and answers counts with every pool seen before
// and missing from it at 0.
func (c *pendingCollector) withSeen(counts map[string]int) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.seen)+len(counts))
	for p := range c.seen {
		out[p] = 0
	}
	for p, n := range counts {
		c.seen[p] = struct{}{}
		out[p] = n
	}
	return out
}
