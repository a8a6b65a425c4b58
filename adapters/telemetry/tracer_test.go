package telemetry_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sluicehq/sluice/adapters/telemetry"
	"github.com/sluicehq/sluice/adapters/telemetry/otlptest"
	"github.com/sluicehq/sluice/application/execute"
)

func newMemory(t *testing.T) (*telemetry.Tracer, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tr, err := telemetry.New(context.Background(), telemetry.Options{Exporter: exp, Version: "v9", InstanceID: "member-a"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr, exp
}

// A span's attributes, events and failure reach the exporter; a child started from the
// parent's context is in the same trace.
func TestSpansCarryAttributesEventsAndFailure(t *testing.T) {
	t.Parallel()
	tr, exp := newMemory(t)
	ctx, parent := tr.Start(context.Background(), "run.attempt", execute.A("run_id", "r1"), execute.A("attempt", 2),
		execute.A("sealed", true), execute.A("rows", int64(7)))
	parent.Event("page", execute.A("page", 1), execute.A("rows", int64(100)))
	parent.Event("page", execute.A("page", 2), execute.A("rows", int64(50)))
	_, child := tr.Start(ctx, "finish", execute.A("status", "failed"))
	child.Fail("source failed on page 3")
	child.End()
	parent.End()

	spans := exp.GetSpans()
	require.Len(t, spans, 2)
	fin, run := spans[0], spans[1]
	require.Equal(t, "finish", fin.Name)
	require.Equal(t, codes.Error, fin.Status.Code)
	require.Equal(t, "source failed on page 3", fin.Status.Description)
	require.Equal(t, run.SpanContext.TraceID(), fin.SpanContext.TraceID())
	require.Equal(t, run.SpanContext.SpanID(), fin.Parent.SpanID())

	got := map[string]string{}
	for _, kv := range run.Attributes {
		got[string(kv.Key)] = kv.Value.Emit()
	}
	require.Equal(t, map[string]string{"run_id": "r1", "attempt": "2", "sealed": "true", "rows": "7"}, got)
	require.Len(t, run.Events, 2)
	require.Equal(t, "page", run.Events[1].Name)
	res := map[string]string{}
	for _, kv := range run.Resource.Attributes() {
		res[string(kv.Key)] = kv.Value.Emit()
	}
	require.Equal(t, "sluice", res["service.name"])
	require.Equal(t, "member-a", res["service.instance.id"])
	require.Equal(t, "v9", res["service.version"])
}

// The traceparent of a span, carried to another tracer (another member) through
// WithTraceparent, makes that member's spans children of it in the same trace.
func TestTraceparentJoinsTheTraceElsewhere(t *testing.T) {
	t.Parallel()
	a, expA := newMemory(t)
	b, expB := newMemory(t)
	ctx, submit := a.Start(context.Background(), "submit")
	tp := a.Traceparent(ctx)
	submit.End()
	require.True(t, execute.ValidTraceparent(tp), tp)
	require.Empty(t, a.Traceparent(context.Background()), "no span, no traceparent")

	_, attempt := b.Start(b.WithTraceparent(context.Background(), tp), "run.attempt")
	attempt.End()
	s, r := expA.GetSpans()[0], expB.GetSpans()[0]
	require.Equal(t, s.SpanContext.TraceID(), r.SpanContext.TraceID())
	require.Equal(t, s.SpanContext.SpanID(), r.Parent.SpanID())
	require.True(t, r.Parent.IsRemote())

	// A malformed traceparent is ignored: a new trace starts.
	_, other := b.Start(b.WithTraceparent(context.Background(), "00-zz-not-a-trace"), "run.attempt")
	other.End()
	require.NotEqual(t, s.SpanContext.TraceID(), expB.GetSpans()[1].SpanContext.TraceID())
	require.False(t, expB.GetSpans()[1].Parent.IsValid())
}

// The no-op tracer records nothing but keeps a valid traceparent for the run, and drops
// a malformed one.
func TestNopTracerCarriesTheTraceparent(t *testing.T) {
	t.Parallel()
	var n execute.NopTracer
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	require.Equal(t, tp, n.Traceparent(n.WithTraceparent(context.Background(), tp)))
	for _, bad := range []string{"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", strings.ToUpper(tp),
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" + "x"} {
		require.Empty(t, n.Traceparent(n.WithTraceparent(context.Background(), bad)), bad)
	}
}

// Spans go over OTLP/HTTP to the endpoint's /v1/traces (a base URL, as
// OTEL_EXPORTER_OTLP_ENDPOINT is), or to the path the URL names; Shutdown flushes them.
func TestExportsOverOTLPHTTP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ suffix, path string }{{"", "/v1/traces"}, {"/", "/v1/traces"}, {"/custom/traces", "/custom/traces"}} {
		recv := otlptest.NewReceiver()
		defer recv.Close()
		tr, err := telemetry.New(context.Background(), telemetry.Options{Endpoint: recv.URL + tc.suffix, InstanceID: "m1"})
		require.NoError(t, err)
		ctx, s := tr.Start(context.Background(), "submit", execute.A("pipeline", "orders"))
		_, c := tr.Start(ctx, "claim")
		c.End()
		s.End()
		require.NoError(t, tr.Shutdown(context.Background()))
		spans := recv.Spans()
		require.Len(t, spans, 2, tc.suffix)
		require.Equal(t, []string{tc.path}, recv.Paths())
		require.Equal(t, "claim", spans[0].Name)
		require.Equal(t, spans[1].SpanID, spans[0].ParentID)
		require.Equal(t, "orders", spans[1].Attrs["pipeline"])
		require.Equal(t, "m1", spans[1].Resource["service.instance.id"])
	}
}

func TestRefusesAnEndpointThatIsNotAnHTTPURL(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"collector:4318", "grpc://collector:4317", "http://"} {
		_, err := telemetry.New(context.Background(), telemetry.Options{Endpoint: bad})
		require.ErrorContains(t, err, "--otlp-endpoint", bad)
	}
}

// syncBuffer is a log sink written from the exporter's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A receiver that refuses exports is reported once in the server log (not once per
// batch, not on stderr by OpenTelemetry's global handler), and its recovery once more.
func TestExportFailuresAreLoggedOnceEach(t *testing.T) {
	t.Parallel()
	recv := otlptest.NewReceiver()
	defer recv.Close()
	recv.Fail(http.StatusBadRequest) // not retried by the exporter
	logs := &syncBuffer{}
	tr, err := telemetry.New(context.Background(), telemetry.Options{Endpoint: recv.URL,
		Log: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	flush := func(name string) {
		_, s := tr.Start(context.Background(), name)
		s.End()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, tr.Flush(ctx))
	}
	flush("one")
	flush("two")
	require.Equal(t, 1, strings.Count(logs.String(), "exporting traces failed"), logs.String())
	recv.Fail(0)
	flush("three")
	require.Contains(t, logs.String(), "exporting traces works again")
	require.Contains(t, logs.String(), "spans_dropped=2")
	require.NoError(t, tr.Shutdown(context.Background()))
	require.Len(t, recv.Spans(), 1)
}

// discard is an exporter that drops every span.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkRunSpans is the tracing cost of one run as a member records it: the claim
// span, the attempt span with ten page events, and the finish span.
func BenchmarkRunSpans(b *testing.B) {
	tr, err := telemetry.New(context.Background(), telemetry.Options{Exporter: discard{}})
	require.NoError(b, err)
	defer func() { _ = tr.Shutdown(context.Background()) }()
	base := tr.WithTraceparent(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	attrs := []execute.Attr{execute.A("run_id", "01a23d39-c52f-74cb-8f03-cc598562324d"), execute.A("pipeline", "orders"),
		execute.A("pool", "default"), execute.A("attempt", 1)}
	b.ReportAllocs()
	for b.Loop() {
		_, claim := tr.Start(base, "claim", attrs...)
		claim.End()
		ctx, attempt := tr.Start(base, "run.attempt", attrs...)
		for p := range 10 {
			attempt.Event("page", execute.A("page", p), execute.A("rows", int64(10000)))
		}
		_, finish := tr.Start(ctx, "finish", execute.A("status", "completed"))
		finish.End()
		attempt.End()
	}
}
