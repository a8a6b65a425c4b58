package execute_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

const key = "_/t"

func setup(src *fakeSource, snk *fakeSink) *execute.Executor {
	return &execute.Executor{Registry: &fakeRegistry{src: src, snk: snk}}
}

func TestRunMovesEveryPageAndCommits(t *testing.T) {
	t.Parallel()
	src := &fakeSource{pages: 5, rowsPerPage: 3}
	snk := &fakeSink{}
	var progress []execute.Stats
	stats, err := setup(src, snk).Run(context.Background(), execute.Job{
		Config: config(false), BaseDir: "/base",
		Progress: func(s execute.Stats) { progress = append(progress, s) },
	})
	require.NoError(t, err)
	require.Equal(t, int64(15), stats.RowsRead)
	require.Equal(t, int64(15), stats.RowsWritten)
	require.Equal(t, int64(5), stats.Pages)
	require.Equal(t, int64(50), stats.Bytes)
	require.Positive(t, stats.Elapsed)
	pages, committed, aborted := snk.counts()
	require.Equal(t, 5, pages)
	require.Equal(t, 1, committed)
	require.Zero(t, aborted)
	require.Equal(t, int32(1), src.closed.Load())
	require.Len(t, progress, 5)
	require.Equal(t, int64(3), progress[0].RowsWritten)
	require.Equal(t, int64(15), progress[4].RowsWritten)

	req := src.request()
	require.Equal(t, 3, req.BatchSize)
	require.Equal(t, "/base", req.BaseDir)
	require.Nil(t, req.Incremental, "a full run asks for no bookmark")
}

func TestRunDefaultBatchSize(t *testing.T) {
	t.Parallel()
	src := &fakeSource{pages: 1, rowsPerPage: 1}
	cfg := config(false)
	cfg.Source.Config = map[string]any{}
	_, err := setup(src, &fakeSink{}).Run(context.Background(), execute.Job{Config: cfg})
	require.NoError(t, err)
	require.Equal(t, execute.DefaultBatchSize, src.request().BatchSize)
}

func TestPerPageBookmarkSavedOnlyAfterConfirm(t *testing.T) {
	t.Parallel()
	st := newMemState()
	src := &fakeSource{pages: 5, rowsPerPage: 3}
	snk := &fakeSink{durability: execute.PerPage, failAt: 3}
	var seen []any
	snk.onWrite = func(page int) { seen = append(seen, st.value(key)) }
	stats, err := setup(src, snk).Run(context.Background(), execute.Job{Config: config(true), StateKey: key, State: st})

	var f *execute.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, run.CodePipelineError, f.Code)
	require.Equal(t, execute.RoleSink, f.Role)
	require.Equal(t, 3, f.Page)
	require.EqualError(t, err, "sink fake: page 3: disk full")
	// Before each write the bookmark is the previous confirmed page's, never this page's.
	require.Equal(t, []any{nil, int64(3), int64(6)}, seen)
	require.Equal(t, int64(6), st.value(key), "the failed page 3 never moved the bookmark")
	require.Equal(t, int64(2), stats.Pages)
	require.Equal(t, int64(6), stats.RowsWritten)
	require.Equal(t, int64(9), stats.RowsRead)
	_, committed, aborted := snk.counts()
	require.Zero(t, committed)
	require.Equal(t, 1, aborted)
	require.Equal(t, int32(1), src.closed.Load())
}

func TestAtEndBookmarkSavedAfterCommit(t *testing.T) {
	t.Parallel()
	st := newMemState()
	src := &fakeSource{pages: 4, rowsPerPage: 2}
	snk := &fakeSink{durability: execute.AtEnd}
	var atCommit any = "unset"
	snk.onWrite = func(int) { require.Nil(t, st.value(key)) }
	snk.onCommit = func() { atCommit = st.value(key) }
	_, err := setup(src, snk).Run(context.Background(), execute.Job{Config: config(true), StateKey: key, State: st})
	require.NoError(t, err)
	require.Nil(t, atCommit, "no bookmark before the sink commits")
	require.Equal(t, int64(8), st.value(key))
	require.Equal(t, 1, st.saves)
}

func TestAtEndFailedWriteSavesNothing(t *testing.T) {
	t.Parallel()
	st := newMemState()
	snk := &fakeSink{durability: execute.AtEnd, failAt: 2}
	_, err := setup(&fakeSource{pages: 4, rowsPerPage: 2}, snk).Run(context.Background(),
		execute.Job{Config: config(true), StateKey: key, State: st})
	require.EqualError(t, err, "sink fake: page 2: disk full")
	require.Nil(t, st.value(key))
	_, committed, aborted := snk.counts()
	require.Zero(t, committed)
	require.Equal(t, 1, aborted)
}

func TestIncrementalPassesStoredBookmark(t *testing.T) {
	t.Parallel()
	st := newMemState()
	require.NoError(t, st.Save(context.Background(), key, state.Bookmark{Cursor: "id", Value: int64(42)}))
	src := &fakeSource{pages: 1, rowsPerPage: 1}
	_, err := setup(src, &fakeSink{}).Run(context.Background(), execute.Job{Config: config(true), StateKey: key, State: st})
	require.NoError(t, err)
	inc := src.request().Incremental
	require.NotNil(t, inc)
	require.Equal(t, "id", inc.Cursor)
	require.Equal(t, &state.Bookmark{Cursor: "id", Value: int64(42)}, inc.After)
}

func TestIncrementalFirstRunHasNoBookmark(t *testing.T) {
	t.Parallel()
	src := &fakeSource{pages: 1, rowsPerPage: 1}
	_, err := setup(src, &fakeSink{}).Run(context.Background(),
		execute.Job{Config: config(true), StateKey: key, State: newMemState()})
	require.NoError(t, err)
	require.Nil(t, src.request().Incremental.After)
}

func TestIncrementalRefusals(t *testing.T) {
	t.Parallel()
	other := newMemState()
	require.NoError(t, other.Save(context.Background(), key, state.Bookmark{Cursor: "updated_at", Value: "x"}))
	cases := []struct {
		name string
		job  execute.Job
		code run.ErrorCode
		msg  string
	}{
		{"no store", execute.Job{StateKey: key}, run.CodeConfigError, "needs a state store"},
		{"no key", execute.Job{State: newMemState()}, run.CodeConfigError, "needs a state store and a state key"},
		{"other cursor", execute.Job{State: other, StateKey: key}, run.CodeConfigError, `is for cursor "updated_at"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := &fakeSource{pages: 1, rowsPerPage: 1}
			tc.job.Config = config(true)
			_, err := setup(src, &fakeSink{}).Run(context.Background(), tc.job)
			var f *execute.Failure
			require.ErrorAs(t, err, &f)
			require.Equal(t, tc.code, f.Code)
			require.Contains(t, err.Error(), tc.msg)
			require.Zero(t, src.closed.Load(), "nothing was opened")
		})
	}
}

func TestStateSaveFailureStopsTheRun(t *testing.T) {
	t.Parallel()
	st := newMemState()
	st.fail = true
	snk := &fakeSink{durability: execute.PerPage}
	_, err := setup(&fakeSource{pages: 3, rowsPerPage: 1}, snk).Run(context.Background(),
		execute.Job{Config: config(true), StateKey: key, State: st})
	var f *execute.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, execute.RoleState, f.Role)
	require.Equal(t, 1, f.Page)
	require.Contains(t, err.Error(), "state: page 1: save bookmark")
	pages, _, aborted := snk.counts()
	require.Equal(t, 1, pages)
	require.Equal(t, 1, aborted)
}

func TestUnknownConnectorIsConfigError(t *testing.T) {
	t.Parallel()
	cfg := config(false)
	cfg.Sink.Type = "nope"
	_, err := setup(&fakeSource{}, &fakeSink{}).Run(context.Background(), execute.Job{Config: cfg})
	var f *execute.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, run.CodeConfigError, f.Code)
	require.EqualError(t, err, `sink nope: unknown sink type "nope"`)

	_, err = (&execute.Executor{Registry: &fakeRegistry{}}).Run(context.Background(), execute.Job{})
	require.ErrorAs(t, err, &f)
	require.Equal(t, run.CodeConfigError, f.Code)
}

func TestSourceErrorNamesPage(t *testing.T) {
	t.Parallel()
	src := &fakeSource{pages: 6, rowsPerPage: 2, failAt: 4}
	snk := &fakeSink{}
	stats, err := setup(src, snk).Run(context.Background(), execute.Job{Config: config(false)})
	require.EqualError(t, err, "source fake: page 4: read broke")
	var f *execute.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, execute.RoleSource, f.Role)
	require.Equal(t, "fake", f.Connector)
	require.Equal(t, int64(3), stats.Pages)
	_, committed, aborted := snk.counts()
	require.Zero(t, committed)
	require.Equal(t, 1, aborted)
	require.Equal(t, int32(1), src.closed.Load())
}

func TestPanicsAreRecovered(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		src  *fakeSource
		snk  *fakeSink
		msg  string
	}{
		{"source next", &fakeSource{pages: 3, rowsPerPage: 1, panicAt: 2}, &fakeSink{}, "source fake: page 2: panic: source exploded"},
		{"sink write", &fakeSource{pages: 3, rowsPerPage: 1}, &fakeSink{panicAt: 3}, "sink fake: page 3: panic: sink exploded"},
		{"source open", &fakeSource{panicOnOpen: true}, &fakeSink{}, "source fake: open: panic: open exploded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := setup(tc.src, tc.snk).Run(context.Background(), execute.Job{Config: config(false)})
			require.EqualError(t, err, tc.msg)
			var f *execute.Failure
			require.ErrorAs(t, err, &f)
			require.Equal(t, run.CodePipelineError, f.Code)
			var pe *execute.PanicError
			require.ErrorAs(t, err, &pe)
			require.NotEmpty(t, pe.Stack)
		})
	}
}

func TestCancelPerPageCommitsConfirmedPages(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := newMemState()
	src := &fakeSource{pages: 100, rowsPerPage: 2}
	snk := &fakeSink{durability: execute.PerPage}
	snk.onWrite = func(page int) {
		if page == 2 {
			cancel() // arrives mid-page: page 2 still completes
		}
	}
	stats, err := setup(src, snk).Run(ctx, execute.Job{Config: config(true), StateKey: key, State: st})
	require.ErrorIs(t, err, context.Canceled)
	require.Contains(t, err.Error(), "cancelled after 2 confirmed pages")
	pages, committed, aborted := snk.counts()
	require.Equal(t, 2, pages)
	require.Equal(t, 1, committed, "a PerPage sink keeps what it confirmed")
	require.Zero(t, aborted)
	require.Equal(t, int64(4), st.value(key))
	require.Equal(t, int64(2), stats.Pages)
	require.Equal(t, int32(1), src.closed.Load())
}

func TestCancelAtEndAborts(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := newMemState()
	snk := &fakeSink{durability: execute.AtEnd}
	snk.onWrite = func(page int) {
		if page == 2 {
			cancel()
		}
	}
	_, err := setup(&fakeSource{pages: 100, rowsPerPage: 2}, snk).Run(ctx,
		execute.Job{Config: config(true), StateKey: key, State: st})
	require.ErrorIs(t, err, context.Canceled)
	_, committed, aborted := snk.counts()
	require.Zero(t, committed)
	require.Equal(t, 1, aborted)
	require.Nil(t, st.value(key), "an aborted AtEnd sink never moves the bookmark")
}

func TestCancelCauseIsKept(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	lost := errors.New("lease lost")
	src := &fakeSource{pages: 10, rowsPerPage: 1, blockAt: 2}
	snk := &fakeSink{onWrite: func(int) { cancel(lost) }}
	_, err := setup(src, snk).Run(ctx, execute.Job{Config: config(false)})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, lost)
}

func TestSourceBlockedOnCancelIsCancellation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	src := &fakeSource{pages: 10, rowsPerPage: 1, blockAt: 3}
	snk := &fakeSink{}
	snk.onWrite = func(page int) {
		if page == 2 {
			go func() { time.Sleep(10 * time.Millisecond); cancel() }()
		}
	}
	_, err := setup(src, snk).Run(ctx, execute.Job{Config: config(false)})
	require.ErrorIs(t, err, context.Canceled)
	var f *execute.Failure
	require.False(t, errors.As(err, &f), "a source stopped by cancellation is no source failure")
	pages, committed, _ := snk.counts()
	require.Equal(t, 2, pages)
	require.Equal(t, 1, committed)
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	src := &fakeSource{pages: 10, rowsPerPage: 1, blockAt: 3}
	snk := &fakeSink{durability: execute.AtEnd}
	stats, err := setup(src, snk).Run(context.Background(),
		execute.Job{Config: config(false), Timeout: 50 * time.Millisecond})
	var f *execute.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, run.CodeTimeout, f.Code)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "timed out after 50ms (2 pages confirmed)")
	require.Equal(t, int64(2), stats.Pages)
	require.GreaterOrEqual(t, stats.Elapsed, 50*time.Millisecond)
	_, committed, aborted := snk.counts()
	require.Zero(t, committed)
	require.Equal(t, 1, aborted)
	require.Equal(t, int32(1), src.closed.Load())
}

func TestPagesInFlightAreBounded(t *testing.T) {
	t.Parallel()
	src := &fakeSource{pages: 60, rowsPerPage: 1}
	snk := &fakeSink{source: src, onWrite: func(int) { time.Sleep(time.Millisecond) }}
	_, err := setup(src, snk).Run(context.Background(), execute.Job{Config: config(false)})
	require.NoError(t, err)
	// One page being read, two buffered, one being written.
	require.LessOrEqual(t, src.maxOut.Load(), int64(4))
	require.GreaterOrEqual(t, src.maxOut.Load(), int64(2), "the reader runs ahead of a slow sink")
}

func TestProbeOpensAndReleases(t *testing.T) {
	t.Parallel()
	src := &fakeSource{pages: 3, rowsPerPage: 1}
	snk := &fakeSink{}
	require.NoError(t, setup(src, snk).Probe(context.Background(), execute.Job{Config: config(true)}))
	require.Equal(t, int32(1), src.closed.Load())
	pages, committed, aborted := snk.counts()
	require.Zero(t, pages)
	require.Zero(t, committed)
	require.Equal(t, 1, aborted)
	require.Equal(t, "id", src.request().Incremental.Cursor)

	err := setup(&fakeSource{panicOnOpen: true}, snk).Probe(context.Background(), execute.Job{Config: config(false)})
	require.EqualError(t, err, "source fake: open: panic: open exploded")
}
