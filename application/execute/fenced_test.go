package execute_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

// anyRegistry serves any source and sink connector under the type "fake".
type anyRegistry struct {
	src execute.SourceConnector
	snk execute.SinkConnector
}

func (r *anyRegistry) Spec(typ string) (pipeline.Spec, bool) {
	return pipeline.Spec{Type: typ, Roles: pipeline.RoleBoth}, typ == "fake"
}
func (r *anyRegistry) Types(pipeline.Role) []string { return []string{"fake"} }
func (r *anyRegistry) Source(typ string) (execute.SourceConnector, bool) {
	return r.src, typ == "fake"
}
func (r *anyRegistry) Sink(typ string) (execute.SinkConnector, bool) { return r.snk, typ == "fake" }

// fencedSink is a FencedSink over memory: rows and the position commit together.
type fencedSink struct {
	fakeSink
	wm       execute.Watermark
	fenceErr error
	loseAt   int // WriteAt number that finds the fence taken

	mu        sync.Mutex
	key       string
	positions []execute.Position
	rows      []int64 // ids written, in order
	final     *execute.Position
}

func (k *fencedSink) OpenSink(context.Context, execute.WriteRequest) (execute.Sink, error) {
	return k, nil
}

func (k *fencedSink) Fence(_ context.Context, key string) (execute.Watermark, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.key = key
	k.wm.Epoch++
	return k.wm, k.fenceErr
}

func (k *fencedSink) WriteAt(ctx context.Context, p *execute.Page, pos execute.Position) error {
	k.mu.Lock()
	n := len(k.positions) + 1
	k.mu.Unlock()
	if k.onWrite != nil {
		k.onWrite(n)
	}
	if n == k.loseAt {
		return fmt.Errorf("watermark %q moved on: %w", k.key, run.ErrLeaseLost)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.positions = append(k.positions, pos)
	for _, r := range p.Rows {
		k.rows = append(k.rows, r[0].(int64))
	}
	return nil
}

func (k *fencedSink) CommitAt(_ context.Context, pos execute.Position) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.final = &pos
	k.committed++
	return nil
}

func (k *fencedSink) Commit(context.Context) error {
	panic("a fenced run ends with CommitAt, never Commit")
}

func (k *fencedSink) Write(context.Context, *execute.Page) error {
	panic("a fenced run writes with WriteAt, never Write")
}

func exactlyOnce(incremental bool) *pipeline.Config {
	cfg := config(incremental)
	cfg.Delivery = pipeline.ExactlyOnce
	return cfg
}

func ids(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestExactlyOnceFullRunRecordsRowCounts(t *testing.T) {
	t.Parallel()
	src := &fakeSource{pages: 3, rowsPerPage: 2}
	snk := &fencedSink{}
	ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: snk}}
	stats, err := ex.Run(context.Background(), execute.Job{Config: exactlyOnce(false), StateKey: key})
	require.NoError(t, err)
	require.Equal(t, key, snk.key)
	require.Equal(t, []execute.Position{{Rows: 2}, {Rows: 4}, {Rows: 6}}, snk.positions,
		"a full read records rows written, never a bookmark")
	require.Equal(t, &execute.Position{}, snk.final, "a finished full read starts over next time")
	require.Equal(t, ids(1, 6), snk.rows)
	require.Equal(t, int64(6), stats.RowsWritten)
	require.Nil(t, src.request().Incremental)
}

func TestExactlyOnceResumeDropsDeliveredRows(t *testing.T) {
	t.Parallel()
	src := &fakeSource{pages: 4, rowsPerPage: 3}
	snk := &fencedSink{wm: execute.Watermark{Epoch: 4, Position: execute.Position{Rows: 4}}}
	ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: snk}}
	stats, err := ex.Run(context.Background(), execute.Job{Config: exactlyOnce(false), StateKey: key})
	require.NoError(t, err)
	require.Equal(t, ids(5, 12), snk.rows, "the 4 rows an earlier writer delivered are not written again")
	require.Equal(t, []execute.Position{{Rows: 6}, {Rows: 9}, {Rows: 12}}, snk.positions)
	require.Equal(t, int64(12), stats.RowsRead)
	require.Equal(t, int64(8), stats.RowsWritten)
	require.Equal(t, int64(3), stats.Pages, "the wholly delivered first page is not a written page")
}

func TestExactlyOnceIncrementalResumesFromWatermark(t *testing.T) {
	t.Parallel()
	st := newMemState()
	require.NoError(t, st.Save(context.Background(), key, state.Bookmark{Cursor: "id", Value: int64(99)}))
	src := &fakeSource{pages: 2, rowsPerPage: 2}
	mark := &state.Bookmark{Cursor: "id", Value: int64(7)}
	snk := &fencedSink{wm: execute.Watermark{Epoch: 1, Position: execute.Position{Bookmark: mark}}}
	ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: snk}}
	_, err := ex.Run(context.Background(), execute.Job{Config: exactlyOnce(true), StateKey: key, State: st})
	require.NoError(t, err)
	inc := src.request().Incremental
	require.Equal(t, &execute.Incremental{Cursor: "id", After: mark, Exact: true}, inc,
		"the bookmark comes from the watermark, not the state store, and page edges must be exact")
	require.Equal(t, []execute.Position{
		{Bookmark: &state.Bookmark{Cursor: "id", Value: int64(2)}},
		{Bookmark: &state.Bookmark{Cursor: "id", Value: int64(4)}},
	}, snk.positions)
	require.Equal(t, &execute.Position{Bookmark: &state.Bookmark{Cursor: "id", Value: int64(4)}}, snk.final)
	require.Equal(t, int64(99), st.value(key), "the state store is not used")
}

func TestExactlyOnceLeaseLost(t *testing.T) {
	t.Parallel()
	src := &fakeSource{pages: 5, rowsPerPage: 1}
	snk := &fencedSink{loseAt: 3}
	ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: snk}}
	stats, err := ex.Run(context.Background(), execute.Job{Config: exactlyOnce(false), StateKey: key})
	var f *execute.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, run.CodeLeaseLost, f.Code)
	require.Equal(t, 3, f.Page)
	require.ErrorIs(t, err, run.ErrLeaseLost)
	require.Equal(t, int64(2), stats.RowsWritten)
	require.Nil(t, snk.final, "nothing is committed after the fence is lost")
	_, _, aborted := snk.counts()
	require.Equal(t, 1, aborted)
}

func TestExactlyOnceCancelKeepsPosition(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := &fakeSource{pages: 100, rowsPerPage: 2}
	snk := &fencedSink{}
	snk.onWrite = func(n int) {
		if n == 2 {
			cancel()
		}
	}
	ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: snk}}
	_, err := ex.Run(ctx, execute.Job{Config: exactlyOnce(false), StateKey: key})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, &execute.Position{Rows: 4}, snk.final, "a stopped run resumes where it stopped")
}

func TestExactlyOnceRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		snk  execute.SinkConnector
		cfg  *pipeline.Config
		key  string
		code run.ErrorCode
		msg  string
	}{
		{"no state key", &fencedSink{}, exactlyOnce(false), "", run.CodeConfigError, "needs a state key"},
		{"sink without watermark", &fakeSink{}, exactlyOnce(false), key, run.CodeConfigError,
			"cannot deliver exactly once (it has no transactional watermark); use delivery: at_least_once or a SQL sink"},
		{"bookmark but full read", &fencedSink{wm: execute.Watermark{Position: execute.Position{
			Bookmark: &state.Bookmark{Cursor: "id", Value: int64(3)}}}}, exactlyOnce(false), key, run.CodeConfigError,
			"replication is full; set state.key"},
		{"bookmark of another cursor", &fencedSink{wm: execute.Watermark{Position: execute.Position{
			Bookmark: &state.Bookmark{Cursor: "ts", Value: int64(3)}}}}, exactlyOnce(true), key, run.CodeConfigError,
			`is for cursor "ts"`},
		{"fence fails", &fencedSink{fenceErr: fmt.Errorf("permission denied for table sluice_watermarks")},
			exactlyOnce(false), key, run.CodePipelineError, "fence watermark"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := &fakeSource{pages: 1, rowsPerPage: 1}
			ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: tc.snk}}
			_, err := ex.Run(context.Background(), execute.Job{Config: tc.cfg, StateKey: tc.key})
			var f *execute.Failure
			require.ErrorAs(t, err, &f)
			require.Equal(t, tc.code, f.Code)
			require.Contains(t, err.Error(), tc.msg)
			require.Equal(t, execute.ReadRequest{}, src.request(), "the source is never opened")
		})
	}
}
