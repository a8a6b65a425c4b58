// Package metrics owns the Prometheus side of sluice (SPEC §10): the collectors of one
// server, kept on a registry of their own, and the /metrics handler that exposes them.
//
// It implements the measurement ports the application and the http adapter declare
// (cluster.Metrics, the http RequestMetrics port) by method set only, so bootstrap can
// hand one *Metrics to every consumer. The registry is private to each *Metrics: the
// global default registry would leak collectors between tests and between servers in
// one process.
//
// No family carries a run id as a label: every run would mint a new series and the
// scrape would grow without bound.
package metrics
