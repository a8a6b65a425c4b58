package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluicehq/sluice/application/execute"
)

// The application opens its spans through this adapter.
var _ execute.Tracer = (*Tracer)(nil)

// ServiceName is the service.name of every span this binary exports.
const ServiceName = "sluice"

// tracesPath is where an OTLP/HTTP receiver takes spans below its base URL (the same rule
// as OTEL_EXPORTER_OTLP_ENDPOINT).
const tracesPath = "/v1/traces"

// Options configure New.
type Options struct {
	// Endpoint is the OTLP/HTTP receiver (--otlp-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT):
	// a base URL such as http://collector:4318, to which /v1/traces is added, or a URL
	// with its own path, used as it is. http:// sends in clear, https:// over TLS.
	Endpoint string
	// Version and InstanceID name this member on its spans (service.version,
	// service.instance.id).
	Version    string
	InstanceID string
	// Exporter replaces the OTLP exporter, with spans exported as each ends (tests use
	// sdk/trace/tracetest's in-memory exporter); Endpoint is then ignored.
	Exporter sdktrace.SpanExporter
	// Log receives export failures (one line when they start, one when they stop); nil
	// discards them.
	Log *slog.Logger
}

// Tracer implements execute.Tracer with an OpenTelemetry tracer provider. Spans are
// exported in batches from a bounded queue (the SDK drops spans rather than grow without
// limit when the receiver is slow); Shutdown flushes what is queued.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TraceContext
}

// New builds the tracer provider and its exporter. It does not connect: an unreachable
// receiver shows as export failures in the log, never as a failed start.
func New(ctx context.Context, opts Options) (*Tracer, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", ServiceName),
		attribute.String("service.version", opts.Version),
		attribute.String("service.instance.id", opts.InstanceID),
	))
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	var export sdktrace.SpanProcessor
	if opts.Exporter != nil {
		export = sdktrace.NewSimpleSpanProcessor(opts.Exporter)
	} else {
		exp, err := newExporter(ctx, opts.Endpoint)
		if err != nil {
			return nil, err
		}
		export = sdktrace.NewBatchSpanProcessor(&loggingExporter{SpanExporter: exp, log: log})
	}
	provider := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(export),
		// A traced submitter's sampling decision is kept; new traces are all sampled.
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
	)
	return &Tracer{provider: provider, tracer: provider.Tracer("github.com/sluicehq/sluice")}, nil
}

// newExporter builds the OTLP/HTTP exporter of endpoint.
func newExporter(ctx context.Context, endpoint string) (sdktrace.SpanExporter, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("--otlp-endpoint %q: want an http:// or https:// URL such as http://collector:4318", endpoint)
	}
	path := u.Path
	if strings.Trim(path, "/") == "" {
		path = tracesPath
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(u.Host), otlptracehttp.WithURLPath(path)}
	if u.Scheme == "http" {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("--otlp-endpoint %s: %w", endpoint, err)
	}
	return exp, nil
}

// Shutdown exports the spans still queued and stops the exporter; ctx bounds the wait.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if err := t.provider.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("flush traces: %w", err)
	}
	return nil
}

// Flush exports the spans ended so far; ctx bounds the wait.
func (t *Tracer) Flush(ctx context.Context) error {
	if err := t.provider.ForceFlush(ctx); err != nil {
		return fmt.Errorf("flush traces: %w", err)
	}
	return nil
}

// Start opens a span under the one ctx carries (or its remote parent).
func (t *Tracer) Start(ctx context.Context, name string, attrs ...execute.Attr) (context.Context, execute.Span) {
	ctx, s := t.tracer.Start(ctx, name, trace.WithAttributes(convert(attrs)...))
	return ctx, span{s}
}

// Traceparent is the W3C traceparent of the span ctx carries, or "".
func (t *Tracer) Traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	t.prop.Inject(ctx, c)
	return c.Get("traceparent")
}

// WithTraceparent makes tp the remote parent of the next span started from ctx.
func (t *Tracer) WithTraceparent(ctx context.Context, tp string) context.Context {
	if !execute.ValidTraceparent(tp) {
		return ctx
	}
	return t.prop.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
}

// span adapts an OpenTelemetry span to execute.Span.
type span struct{ s trace.Span }

func (s span) Event(name string, attrs ...execute.Attr) {
	s.s.AddEvent(name, trace.WithAttributes(convert(attrs)...))
}

func (s span) SetAttrs(attrs ...execute.Attr) { s.s.SetAttributes(convert(attrs)...) }

func (s span) Fail(msg string) { s.s.SetStatus(codes.Error, msg) }

func (s span) End() { s.s.End() }

// convert maps port attributes to OpenTelemetry ones.
func convert(attrs []execute.Attr) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		switch v := a.Value.(type) {
		case string:
			out = append(out, attribute.String(a.Key, v))
		case bool:
			out = append(out, attribute.Bool(a.Key, v))
		case int:
			out = append(out, attribute.Int(a.Key, v))
		case int64:
			out = append(out, attribute.Int64(a.Key, v))
		case float64:
			out = append(out, attribute.Float64(a.Key, v))
		default:
			out = append(out, attribute.String(a.Key, fmt.Sprint(v)))
		}
	}
	return out
}
