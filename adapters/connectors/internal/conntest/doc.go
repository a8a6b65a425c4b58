// Package conntest owns the test helpers the connectors' tests share: running a sink
// over pages, reading a source to its end and building pages. It is imported by tests
// only; each connector's tests wrap it with their connector and config.
package conntest
