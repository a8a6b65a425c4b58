package console_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sluicehq/sluice/adapters/console"
	"github.com/sluicehq/sluice/adapters/telemetry"
	"github.com/sluicehq/sluice/tests/historytest"
)

// attrs are a span's attributes as text.
func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.Emit()
	}
	return out
}

// Console requests are traced like the API's (SPEC §14.6): one span per request named by
// its route pattern, a child of the client's traceparent, with status, principal and
// request id; the use-case the page calls runs under it.
func TestConsoleRequestsAreTraced(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tr, err := telemetry.New(context.Background(), telemetry.Options{Exporter: exp, InstanceID: "member-a"})
	require.NoError(t, err)
	defer func() { _ = tr.Shutdown(context.Background()) }()
	f := &fakeRuns{}
	clk := &clock{now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	h, err := console.New(console.Config{SessionKey: testKey, Now: clk.Now},
		console.Deps{Tokens: tokenTable(tokens), Signouts: historytest.Open(t), Runs: f, Explain: explain, Tracer: tr})
	require.NoError(t, err)
	c := &client{t: t, h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-77")
		h.ServeHTTP(w, r)
	})}
	c.signIn("viewer-token")
	exp.Reset()

	const client = "4bf92f3577b34da6a3ce929d0e0e4736"
	rec := c.do("GET", "/ui/runs/"+theRun.ID, nil, map[string]string{"traceparent": "00-" + client + "-00f067aa0ba902b7-01"})
	require.Equal(t, http.StatusOK, rec.Code)
	c.do("GET", "/ui/nowhere/"+theRun.ID, nil, nil)

	spans := exp.GetSpans().Snapshots()
	require.Len(t, spans, 2)
	page, lost := spans[0], spans[1]
	require.Equal(t, "GET /ui/runs/{id}", page.Name(), "named by the pattern, not the path")
	require.Equal(t, client, page.SpanContext().TraceID().String())
	require.Equal(t, "00f067aa0ba902b7", page.Parent().SpanID().String())
	got := attrs(page)
	require.Equal(t, "/ui/runs/{id}", got["http.route"])
	require.Equal(t, "GET", got["http.request.method"])
	require.Equal(t, "200", got["http.response.status_code"])
	require.Equal(t, "vic", got["principal"])
	require.Equal(t, "req-77", got["request_id"])

	f.mu.Lock()
	useCase := f.getCtx
	f.mu.Unlock()
	require.Equal(t, "00-"+client+"-"+page.SpanContext().SpanID().String()+"-01", tr.Traceparent(useCase),
		"the use-case runs under the request's span")

	require.Equal(t, "HTTP unmatched", lost.Name(), "an unmatched path is not a span name")
	require.Equal(t, "404", attrs(lost)["http.response.status_code"])
}
