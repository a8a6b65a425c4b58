package runs_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
)

// spanKey marks the context of a recorded span.
type spanKey struct{}

// recTracer records spans; the traceparent of a context names the span it carries.
type recTracer struct {
	mu    sync.Mutex
	spans []*recSpan
}

type recSpan struct {
	name   string
	attrs  map[string]any
	failed string
	ended  bool
}

func (r *recTracer) Start(ctx context.Context, name string, attrs ...execute.Attr) (context.Context, execute.Span) {
	s := &recSpan{name: name, attrs: map[string]any{}}
	s.SetAttrs(attrs...)
	r.mu.Lock()
	r.spans = append(r.spans, s)
	r.mu.Unlock()
	return context.WithValue(ctx, spanKey{}, s), s
}

func (r *recTracer) Traceparent(ctx context.Context) string {
	if s, ok := ctx.Value(spanKey{}).(*recSpan); ok {
		return "traceparent-of-" + s.name
	}
	return ""
}

func (r *recTracer) WithTraceparent(ctx context.Context, _ string) context.Context { return ctx }

func (s *recSpan) Event(string, ...execute.Attr) {}
func (s *recSpan) SetAttrs(attrs ...execute.Attr) {
	for _, a := range attrs {
		s.attrs[a.Key] = a.Value
	}
}
func (s *recSpan) Fail(msg string) { s.failed = msg }
func (s *recSpan) End()            { s.ended = true }

// A run stores the traceparent of its submit span, which names the run and its pipeline;
// a refused submission marks the span failed.
func TestSubmitIsASpanWhoseTraceparentTheRunKeeps(t *testing.T) {
	t.Parallel()
	tr := &recTracer{}
	h := newHarness(t, withDeps(func(d *runs.Deps) { d.Tracer = tr }))
	res := h.submit(t, req(operator, baseConfig))
	rec, err := h.store.Get(context.Background(), res.RunID)
	require.NoError(t, err)
	require.Equal(t, "traceparent-of-submit", rec.Traceparent, "the execution's spans become children of the submit span")

	require.Len(t, tr.spans, 1)
	s := tr.spans[0]
	require.True(t, s.ended)
	require.Empty(t, s.failed)
	require.Equal(t, map[string]any{"trigger_kind": "api", "pipeline": "orders", "pool": "default",
		"run_id": res.RunID, "status": "pending", "replayed": false}, s.attrs)

	_, err = h.svc.Submit(context.Background(), req(operator, "version: 1\nname: [broken"))
	require.Error(t, err)
	require.Len(t, tr.spans, 2)
	require.NotEmpty(t, tr.spans[1].failed)
	require.True(t, tr.spans[1].ended)
}

// Without tracing, the traceparent a client sent still reaches the run, so a member that
// traces joins the client's trace when it executes it.
func TestSubmitKeepsTheClientsTraceparentWithoutTracing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	res, err := h.svc.Submit(execute.NopTracer{}.WithTraceparent(context.Background(), tp), req(operator, baseConfig))
	require.NoError(t, err)
	rec, err := h.store.Get(context.Background(), res.RunID)
	require.NoError(t, err)
	require.Equal(t, tp, rec.Traceparent)

	untraced := h.submit(t, req(operator, baseConfig))
	rec, err = h.store.Get(context.Background(), untraced.RunID)
	require.NoError(t, err)
	require.Empty(t, rec.Traceparent)
}
