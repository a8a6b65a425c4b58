package execute_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

// watermarkDB is a fenced sink whose watermark outlives each sink, as a database's
// does: every execution fences, resumes from what the last one recorded and appends.
type watermarkDB struct {
	fakeSink
	mu    sync.Mutex
	wm    execute.Watermark
	table []int64 // ids appended so far, over every execution
	pages int
}

func (d *watermarkDB) OpenSink(context.Context, execute.WriteRequest) (execute.Sink, error) {
	return d, nil
}

func (d *watermarkDB) Fence(context.Context, string) (execute.Watermark, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.wm.Epoch++
	return d.wm, nil
}

func (d *watermarkDB) WriteAt(_ context.Context, p *execute.Page, pos execute.Position) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pages++
	if d.onWrite != nil {
		d.onWrite(d.pages)
	}
	for _, r := range p.Rows {
		d.table = append(d.table, r[0].(int64))
	}
	d.wm.Position = pos
	return nil
}

func (d *watermarkDB) CommitAt(_ context.Context, pos execute.Position) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.wm.Position = pos
	return nil
}

func (d *watermarkDB) rows() []int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]int64(nil), d.table...)
}

// A run whose finish was lost (its member paused after the sink committed the end, the
// lease expired, a peer executes the run again) must not write the read a second time,
// while a new run of the full-refresh pipeline reads everything again.
func TestExactlyOnceReexecutedRunWritesNothing(t *testing.T) {
	t.Parallel()
	db := &watermarkDB{}
	run := func(runID string) (execute.Stats, *fakeSource) {
		src := &fakeSource{pages: 3, rowsPerPage: 2}
		ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: db}}
		stats, err := ex.Run(context.Background(), execute.Job{Config: exactlyOnce(false), StateKey: key, Run: runID})
		require.NoError(t, err)
		return stats, src
	}

	stats, _ := run("run-1")
	require.Equal(t, int64(6), stats.RowsWritten)
	require.Equal(t, execute.Position{CompletedBy: "run-1"}, db.wm.Position,
		"the end of the read records the run that reached it")

	stats, src := run("run-1") // the same run again: its finish never reached the history
	require.Zero(t, stats.RowsWritten)
	require.Equal(t, ids(1, 6), db.rows(), "the re-execution added no row")
	require.Equal(t, execute.ReadRequest{}, src.request(), "the source is not even opened")
	_, _, aborted := db.counts()
	require.Equal(t, 1, aborted, "the sink is released without committing anything")
	require.Equal(t, int64(2), db.wm.Epoch, "the re-execution still fenced the earlier attempt")

	stats, _ = run("run-2")
	require.Equal(t, int64(6), stats.RowsWritten, "a new run of a full read starts at the beginning")
	require.Equal(t, append(ids(1, 6), ids(1, 6)...), db.rows())
	require.Equal(t, execute.Position{CompletedBy: "run-2"}, db.wm.Position)
}

// A run stopped mid-read records no completion, so whichever run comes next (the same
// one handed back, or `sluice run` with no run id) resumes where it stopped.
func TestExactlyOnceStoppedRunIsNotComplete(t *testing.T) {
	t.Parallel()
	db := &watermarkDB{wm: execute.Watermark{Position: execute.Position{CompletedBy: "run-0"}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db.onWrite = func(n int) {
		if n == 2 {
			cancel()
		}
	}
	src := &fakeSource{pages: 3, rowsPerPage: 2}
	ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: db}}
	_, err := ex.Run(ctx, execute.Job{Config: exactlyOnce(false), StateKey: key, Run: "run-1"})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, execute.Position{Rows: 4}, db.wm.Position, "a page clears the last run's completion")

	db.onWrite = nil
	ex.Registry = &anyRegistry{src: &fakeSource{pages: 3, rowsPerPage: 2}, snk: db}
	stats, err := ex.Run(context.Background(), execute.Job{Config: exactlyOnce(false), StateKey: key, Run: "run-1"})
	require.NoError(t, err)
	require.Equal(t, int64(2), stats.RowsWritten)
	require.Equal(t, ids(1, 6), db.rows())
}

// An incremental read that another run completed continues after its bookmark: only the
// run that completed it skips the read.
func TestExactlyOnceIncrementalNewRunContinues(t *testing.T) {
	t.Parallel()
	mark := &state.Bookmark{Cursor: "id", Value: int64(4)}
	db := &watermarkDB{wm: execute.Watermark{Position: execute.Position{Bookmark: mark, CompletedBy: "run-0"}}}
	src := &fakeSource{pages: 1, rowsPerPage: 2}
	ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: db}}
	stats, err := ex.Run(context.Background(), execute.Job{Config: exactlyOnce(true), StateKey: key, Run: "run-1"})
	require.NoError(t, err)
	require.Equal(t, mark, src.request().Incremental.After)
	require.Equal(t, int64(2), stats.RowsWritten)
	require.Equal(t, "run-1", db.wm.Position.CompletedBy)
}
