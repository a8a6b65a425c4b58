// Package otlptest is an OTLP/HTTP trace receiver for tests: it decodes what a real
// exporter sends (protobuf ExportTraceServiceRequest) into plain spans, so a test can
// check the traces of whole processes without a collector.
package otlptest
