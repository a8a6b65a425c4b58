package telemetry

import (
	"context"
	"log/slog"
	"sync"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// loggingExporter reports export failures to the server log itself and answers the
// batch processor nil: the processor would hand them to OpenTelemetry's process-wide
// error handler, which prints unstructured lines to stderr for every failed batch. One
// line when exports start failing and one when they work again keep a receiver outage
// visible without flooding the log.
type loggingExporter struct {
	sdktrace.SpanExporter
	log *slog.Logger

	mu      sync.Mutex
	failing bool
	dropped int
}

func (e *loggingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err != nil && !e.failing:
		e.failing, e.dropped = true, len(spans)
		e.log.Warn("exporting traces failed; spans are dropped until the receiver answers", "error", err.Error())
	case err != nil:
		e.dropped += len(spans)
	case e.failing:
		e.log.Info("exporting traces works again", "spans_dropped", e.dropped)
		e.failing, e.dropped = false, 0
	}
	return nil
}
