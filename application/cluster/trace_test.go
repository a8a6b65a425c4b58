package cluster_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
)

type parentKey struct{}

// treeTracer records each span with its parent: the span its context carries, else the
// traceparent WithTraceparent put there.
type treeTracer struct {
	mu    sync.Mutex
	spans []*treeSpan
}

type treeSpan struct {
	t      *treeTracer
	id     string
	name   string
	parent string
	attrs  map[string]any
	events []string
	failed string
	ended  bool
}

func (t *treeTracer) Start(ctx context.Context, name string, attrs ...execute.Attr) (context.Context, execute.Span) {
	parent, _ := ctx.Value(parentKey{}).(string)
	t.mu.Lock()
	s := &treeSpan{t: t, id: name + "#" + string(rune('a'+len(t.spans))), name: name, parent: parent, attrs: map[string]any{}}
	t.spans = append(t.spans, s)
	t.mu.Unlock()
	s.SetAttrs(attrs...)
	return context.WithValue(ctx, parentKey{}, s.id), s
}

func (t *treeTracer) Traceparent(ctx context.Context) string {
	id, _ := ctx.Value(parentKey{}).(string)
	return id
}

func (t *treeTracer) WithTraceparent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return context.WithValue(ctx, parentKey{}, tp)
}

func (s *treeSpan) Event(name string, _ ...execute.Attr) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	s.events = append(s.events, name)
}

func (s *treeSpan) SetAttrs(attrs ...execute.Attr) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	for _, a := range attrs {
		s.attrs[a.Key] = a.Value
	}
}

func (s *treeSpan) Fail(msg string) { s.t.mu.Lock(); s.failed = msg; s.t.mu.Unlock() }
func (s *treeSpan) End()            { s.t.mu.Lock(); s.ended = true; s.t.mu.Unlock() }

// ended are copies of the ended spans named name.
func (t *treeTracer) ended(name string) []treeSpan {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []treeSpan
	for _, s := range t.spans {
		if s.name == name && s.ended {
			out = append(out, *s)
		}
	}
	return out
}

// paging is a runner that confirms two pages on the attempt's span.
func paging(fail error) func(context.Context, execute.Job) (execute.Stats, error) {
	return func(_ context.Context, job execute.Job) (execute.Stats, error) {
		job.Span.Event("page")
		job.Span.Event("page")
		return execute.Stats{RowsWritten: 4, Pages: 2}, fail
	}
}

// A claimed run's claim and attempt spans are children of the traceparent stored with it;
// the attempt carries the run's attributes and its pages, the finish is its child.
func TestARunsSpansJoinTheTraceItWasSubmittedIn(t *testing.T) {
	t.Parallel()
	tr := &treeTracer{}
	c := claimed("r1")
	c.Traceparent, c.Attempt = "submit-span", 1 // the claim makes it attempt 2
	failing := claimed("r2")                    // no traceparent: a trace of its own
	store := newHistory(t)
	store.add(c, failing)
	start(t, store, &fakeRunner{fn: func(ctx context.Context, job execute.Job) (execute.Stats, error) {
		if job.Run == "r2" {
			return paging(&execute.Failure{Code: "pipeline_error", Err: errors.New("sink refused")})(ctx, job)
		}
		return paging(nil)(ctx, job)
	}}, func(_ *cluster.Config, d *cluster.Deps) { d.Tracer = tr })
	require.Eventually(t, func() bool { return len(tr.ended("finish")) == 2 && len(tr.ended("run.attempt")) == 2 }, waitFor, tick)

	attempts := map[string]treeSpan{}
	for _, s := range tr.ended("run.attempt") {
		attempts[s.attrs["run_id"].(string)] = s
	}
	a := attempts["r1"]
	require.Equal(t, "submit-span", a.parent)
	require.Equal(t, "orders", a.attrs["pipeline"])
	require.Equal(t, "default", a.attrs["pool"])
	require.Equal(t, 2, a.attrs["attempt"])
	require.Equal(t, "m1", a.attrs["instance_id"])
	require.Equal(t, "completed", a.attrs["status"])
	require.Equal(t, []string{"page", "page"}, a.events)
	require.Empty(t, a.failed)

	b := attempts["r2"]
	require.Empty(t, b.parent)
	require.Equal(t, "failed", b.attrs["status"])
	require.Equal(t, "pipeline_error", b.attrs["error_code"])
	require.Contains(t, b.failed, "sink refused")

	for _, s := range tr.ended("claim") {
		if s.attrs["run_id"] == "r1" {
			require.Equal(t, "submit-span", s.parent)
		}
	}
	for _, f := range tr.ended("finish") {
		run := f.attrs["run_id"].(string)
		require.Equal(t, attempts[run].id, f.parent, "finish is a child of the attempt")
		require.Equal(t, attempts[run].attrs["status"], f.attrs["status"])
	}
}

// Each shard is an attempt span of its own, named by its index, under the run's stored
// traceparent.
func TestShardSpansCarryTheirIndex(t *testing.T) {
	t.Parallel()
	tr := &treeTracer{}
	store := newHistory(t)
	r := claimed("r3")
	r.Traceparent = "submit-span"
	store.planned(r, hashSlices(2))
	start(t, store, &fakeRunner{fn: paging(nil)}, func(c *cluster.Config, d *cluster.Deps) {
		sharding(&fakePlanner{}, true)(c, d)
		d.Tracer = tr
	})
	require.Eventually(t, func() bool { return len(tr.ended("shard.attempt")) == 2 && len(tr.ended("finish")) == 2 }, waitFor, tick)
	seen := map[any]bool{}
	for _, s := range tr.ended("shard.attempt") {
		require.Equal(t, "submit-span", s.parent)
		require.Equal(t, "r3", s.attrs["run_id"])
		require.Equal(t, 2, s.attrs["shards"])
		require.Equal(t, []string{"page", "page"}, s.events)
		seen[s.attrs["shard"]] = true
	}
	require.Equal(t, map[any]bool{0: true, 1: true}, seen)
}
