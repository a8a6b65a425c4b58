package execute_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/state"
)

// fakeRegistry serves one source and one sink under the type "fake".
type fakeRegistry struct {
	src *fakeSource
	snk *fakeSink
}

func (r *fakeRegistry) Spec(typ string) (pipeline.Spec, bool) {
	return pipeline.Spec{Type: typ, Roles: pipeline.RoleBoth}, typ == "fake"
}

func (r *fakeRegistry) Types(pipeline.Role) []string { return []string{"fake"} }

func (r *fakeRegistry) Source(typ string) (execute.SourceConnector, bool) {
	return r.src, typ == "fake"
}

func (r *fakeRegistry) Sink(typ string) (execute.SinkConnector, bool) {
	return r.snk, typ == "fake"
}

// fakeSource yields pages of rowsPerPage rows with an integer cursor "id". It counts the
// pages that are alive (handed out and not yet written) to check the in-flight bound.
type fakeSource struct {
	pages       int
	rowsPerPage int
	failAt      int  // page whose Next returns an error
	panicAt     int  // page whose Next panics
	blockAt     int  // page whose Next waits for ctx
	panicOnOpen bool // OpenSource panics
	// onNext, when set, runs after page n was handed out or, for blockAt, when its Next
	// begins to wait: a test waits on that event instead of sleeping.
	onNext func(n int)

	mu          sync.Mutex
	req         execute.ReadRequest
	next        int
	closed      atomic.Int32
	outstanding atomic.Int64
	maxOut      atomic.Int64
}

func (s *fakeSource) OpenSource(_ context.Context, req execute.ReadRequest) (execute.Source, error) {
	if s.panicOnOpen {
		panic("open exploded")
	}
	s.mu.Lock()
	s.req = req
	s.mu.Unlock()
	return s, nil
}

func (s *fakeSource) Next(ctx context.Context) (*execute.Page, error) {
	s.mu.Lock()
	s.next++
	n := s.next
	s.mu.Unlock()
	switch {
	case n > s.pages:
		return nil, io.EOF
	case n == s.failAt:
		return nil, errors.New("read broke")
	case n == s.panicAt:
		panic("source exploded")
	case n == s.blockAt:
		if s.onNext != nil {
			s.onNext(n)
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	p := &execute.Page{Columns: []string{"id"}, Bytes: 10}
	for i := range s.rowsPerPage {
		p.Rows = append(p.Rows, []any{int64((n-1)*s.rowsPerPage + i + 1)})
	}
	p.Bookmark = &state.Bookmark{Cursor: "id", Value: int64(n * s.rowsPerPage)}
	if out := s.outstanding.Add(1); out > s.maxOut.Load() {
		s.maxOut.Store(out)
	}
	if s.onNext != nil {
		s.onNext(n)
	}
	return p, nil
}

func (s *fakeSource) Close() error {
	s.closed.Add(1)
	return nil
}

func (s *fakeSource) request() execute.ReadRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.req
}

// fakeSink records confirmed pages; onWrite runs before each page is confirmed.
type fakeSink struct {
	durability execute.Durability
	failAt     int
	panicAt    int
	onWrite    func(page int)
	afterWrite func(page int) // runs after page n was recorded, when set
	onCommit   func()
	commitErr  error       // what Commit answers
	source     *fakeSource // released pages are subtracted from its outstanding count

	mu        sync.Mutex
	written   [][][]any
	committed int
	aborted   int
}

func (k *fakeSink) OpenSink(context.Context, execute.WriteRequest) (execute.Sink, error) {
	return k, nil
}

func (k *fakeSink) Write(_ context.Context, p *execute.Page) error {
	k.mu.Lock()
	n := len(k.written) + 1
	k.mu.Unlock()
	if k.source != nil {
		defer k.source.outstanding.Add(-1)
	}
	if k.onWrite != nil {
		k.onWrite(n)
	}
	switch n {
	case k.failAt:
		return fmt.Errorf("disk full")
	case k.panicAt:
		panic("sink exploded")
	}
	k.mu.Lock()
	k.written = append(k.written, p.Rows)
	k.mu.Unlock()
	if k.afterWrite != nil {
		k.afterWrite(n)
	}
	return nil
}

func (k *fakeSink) Commit(context.Context) error {
	if k.onCommit != nil {
		k.onCommit()
	}
	k.mu.Lock()
	k.committed++
	k.mu.Unlock()
	return k.commitErr
}

func (k *fakeSink) Abort(context.Context) error {
	k.mu.Lock()
	k.aborted++
	k.mu.Unlock()
	return nil
}

func (k *fakeSink) Durability() execute.Durability { return k.durability }

func (k *fakeSink) counts() (pages, committed, aborted int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.written), k.committed, k.aborted
}

// memState is an in-memory StateStore that records every save.
type memState struct {
	mu    sync.Mutex
	marks map[string]state.Bookmark
	saves int
	fail  bool
}

func newMemState() *memState { return &memState{marks: map[string]state.Bookmark{}} }

func (m *memState) Load(_ context.Context, key string) (*state.Bookmark, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.marks[key]
	if !ok {
		return nil, nil
	}
	return &b, nil
}

func (m *memState) Save(_ context.Context, key string, b state.Bookmark) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errors.New("state disk full")
	}
	m.marks[key] = b
	m.saves++
	return nil
}

func (m *memState) value(key string) any {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.marks[key]
	if !ok {
		return nil
	}
	return b.Value
}

func config(incremental bool) *pipeline.Config {
	cfg := &pipeline.Config{
		Version: 1, Name: "t",
		Replication: pipeline.Replication{Type: pipeline.Full},
		Source:      pipeline.Connector{Type: "fake", Config: map[string]any{"batch_size": int64(3)}},
		Sink:        pipeline.Connector{Type: "fake", Config: map[string]any{}},
	}
	if incremental {
		cfg.Replication = pipeline.Replication{Type: pipeline.Incremental, Cursor: "id"}
	}
	return cfg
}
