package execute

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/reach"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

// DefaultBatchSize is the page size when a source config names none (SPEC §1.3).
const DefaultBatchSize = 10000

// pagesInFlight is the capacity of the channel between the reader and the writer. With
// one page being read and one being written, at most pagesInFlight+2 pages are alive at
// once, so memory is bounded by the page size whatever the row count.
const pagesInFlight = 2

// Executor runs jobs: it builds a source and a sink from the registry and moves pages
// between them. It holds no per-run state and is safe for concurrent use.
type Executor struct {
	Registry Registry
	Log      *slog.Logger
	// Reach confines what connectors may touch (SPEC §14.1); nil is Unconfined.
	Reach   Reach
	Metrics Metrics // nil: pages are not counted
}

// Job is one run of one validated config.
type Job struct {
	Config *pipeline.Config
	// StateKey is where the bookmark lives when the config is incremental, and the key
	// of the sink's watermark row with delivery exactly_once (incremental or not).
	StateKey string
	// Run names the run this job executes: the run id, or for a shard the shard's state
	// key (run id and index). An exactly-once job records it in the sink's watermark when
	// its read is complete, so a re-execution of the same run after a lost finish writes
	// nothing (SPEC §1.7). "" (sluice run) records no run: every execution is a new one.
	Run string
	// State stores bookmarks; nil when the config is not incremental. With delivery
	// exactly_once it is not used: the position lives in the sink's watermark (FencedSink).
	State   StateStore
	BaseDir string
	// Timeout bounds the running time (not time spent queued); 0 means none.
	Timeout time.Duration
	// Shard narrows the source to one shard of a sharded run; nil reads it all.
	Shard *ShardSlice
	// Progress is called after each confirmed page, from the writing goroutine; may be nil.
	Progress func(Stats)
	Log      *slog.Logger
	// Pipeline labels the job's metrics (the run's name); empty: the config's name.
	Pipeline string
	// Span is the run attempt's span: each confirmed page becomes one of its events
	// (SPEC §14.6). nil records none.
	Span Span
}

// item is what the reader hands the writer: a page, the source's error, or the end.
type item struct {
	page *Page
	err  error
	eof  bool
}

// runner is the state of one Run; only the writing goroutine touches it.
type runner struct {
	job     Job
	cfg     *pipeline.Config
	log     *slog.Logger
	reach   func(role string) Reach
	metrics Metrics
	start   time.Time
	stats   Stats
	incr    *Incremental
	durable Durability
	last    *state.Bookmark // newest confirmed bookmark
	// Exactly-once runs only (see fenced.go).
	fenced FencedSink
	pos    Position // what the pages handed to the sink (written or dropped) cover
	skip   int64    // rows still to drop: already written by an earlier writer
}

// Run executes job and returns what it moved. The error is a *Failure for source, sink,
// state and timeout failures, a config *Failure for a job that cannot start, and wraps
// context.Canceled when ctx was cancelled; Stats are filled in every case.
func (e *Executor) Run(ctx context.Context, job Job) (Stats, error) {
	r := &runner{job: job, cfg: job.Config, log: e.logger(job), metrics: e.Metrics, start: time.Now()}
	r.reach = e.reachFor
	err := r.run(ctx, e.Registry)
	r.stats.Elapsed = time.Since(r.start)
	return r.stats, err
}

func (e *Executor) logger(job Job) *slog.Logger {
	switch {
	case job.Log != nil:
		return job.Log
	case e.Log != nil:
		return e.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (r *runner) run(ctx context.Context, reg Registry) error {
	if r.cfg == nil {
		return &Failure{Code: run.CodeConfigError, Err: errors.New("no pipeline config")}
	}
	srcConn, snkConn, err := connectors(reg, r.cfg)
	if err != nil {
		return err
	}
	r.countConnectors()
	if r.job.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.job.Timeout, errTimeout)
		defer cancel()
	}
	if r.cfg.Delivery == pipeline.ExactlyOnce {
		return r.runFenced(ctx, srcConn, snkConn)
	}
	if r.incr, err = r.incremental(ctx); err != nil {
		return err
	}
	src, err := openSource(ctx, srcConn, r.readRequest(r.incr))
	if err != nil {
		if ctx.Err() != nil {
			return r.stopped(ctx)
		}
		return r.fail(RoleSource, 0, fmt.Errorf("open: %w", err))
	}
	snk, err := openSink(ctx, snkConn, r.writeRequest())
	if err == nil {
		err = safely(func() error { r.durable = snk.Durability(); return nil })
	}
	if err != nil {
		r.closeSource(src)
		if ctx.Err() != nil {
			return r.stopped(ctx)
		}
		return r.fail(RoleSink, 0, fmt.Errorf("open: %w", err))
	}
	if err := r.negotiate(ctx, src, snk); err != nil {
		r.abort(context.WithoutCancel(ctx), snk)
		r.closeSource(src)
		return err
	}
	return r.pump(ctx, src, snk)
}

// pump runs the reader goroutine and writes what it yields until the end, a failure or a
// stop. Source.Close is called only after the reader goroutine has returned, so Close
// never races with Next.
func (r *runner) pump(ctx context.Context, src Source, snk Sink) error {
	readCtx, stopReading := context.WithCancel(ctx)
	pages := make(chan item, pagesInFlight)
	go r.read(readCtx, src, pages)
	defer func() {
		stopReading()
		for range pages { //nolint:revive // drain so the reader can exit
		}
		r.closeSource(src)
	}()

	// Writes, commits and aborts run on a context that outlives cancellation: a page being
	// written is finished (and confirmed) before a stop takes effect, at the page boundary.
	wctx := context.WithoutCancel(ctx)
	for page := 1; ; page++ {
		if ctx.Err() != nil {
			return r.stop(ctx, wctx, snk)
		}
		var it item
		var ok bool
		select {
		case <-ctx.Done():
			return r.stop(ctx, wctx, snk)
		case it, ok = <-pages:
		}
		switch {
		case !ok:
			// The reader only leaves without a final item when it was stopped.
			return r.stop(ctx, wctx, snk)
		case it.eof:
			return r.finish(wctx, snk)
		case it.err != nil:
			var pe *PanicError
			if ctx.Err() != nil && !errors.As(it.err, &pe) {
				return r.stop(ctx, wctx, snk)
			}
			r.abort(wctx, snk)
			return r.fail(RoleSource, page, it.err)
		}
		if err := r.write(wctx, snk, page, it.page); err != nil {
			r.abort(wctx, snk)
			return err
		}
	}
}

// read pulls pages until the end, an error or a stop; it always closes out.
func (r *runner) read(ctx context.Context, src Source, out chan<- item) {
	defer close(out)
	for {
		var p *Page
		err := safely(func() error {
			var err error
			p, err = src.Next(ctx)
			return err
		})
		it := item{page: p, err: err}
		switch {
		case errors.Is(err, io.EOF):
			it = item{eof: true}
		case err == nil && p == nil:
			it.err = errors.New("source returned neither a page nor an error")
		}
		select {
		case out <- it:
		case <-ctx.Done():
			return
		}
		if it.err != nil || it.eof {
			return
		}
	}
}

// write hands one page to the sink and, once it is confirmed, saves the bookmark of a
// PerPage sink. A failed write never moves the bookmark.
func (r *runner) write(ctx context.Context, snk Sink, n int, p *Page) error {
	rows := int64(p.Len())
	r.stats.RowsRead += rows
	r.stats.Bytes += p.Bytes
	r.countPage(DirectionRead, rows)
	if r.fenced != nil {
		return r.writeFenced(ctx, n, p)
	}
	if err := safely(func() error { return snk.Write(ctx, p) }); err != nil {
		return r.fail(RoleSink, n, err)
	}
	r.stats.Pages++
	r.stats.RowsWritten += rows
	if p.Bookmark != nil && r.incr != nil {
		b := *p.Bookmark
		if b.Cursor == "" {
			b.Cursor = r.incr.Cursor
		}
		r.last = &b
		if r.durable == PerPage {
			if err := r.save(ctx, n); err != nil {
				return err
			}
		}
	}
	r.confirmed(n, rows)
	return nil
}

// confirmed logs a confirmed page and reports progress.
func (r *runner) confirmed(n int, rows int64) {
	r.countPage(DirectionWrite, rows)
	r.log.Debug("page confirmed", "page", n, "rows", rows, "rows_written", r.stats.RowsWritten)
	if r.job.Span != nil {
		r.job.Span.Event("page", A("page", n), A("rows", rows), A("rows_written", r.stats.RowsWritten))
	}
	if r.job.Progress != nil {
		s := r.stats
		s.Elapsed = time.Since(r.start)
		r.job.Progress(s)
	}
}

// finish commits after the source's end and saves an AtEnd sink's last bookmark.
func (r *runner) finish(ctx context.Context, snk Sink) error {
	if r.fenced != nil {
		// The read is complete: a new run starts after the last bookmark (a full read from
		// the beginning) with nothing left to drop, while this run, executed again because
		// its finish never reached the history, finds itself recorded and writes nothing.
		return r.commitFenced(ctx, Position{Bookmark: r.pos.Bookmark, CompletedBy: r.job.Run}, "commit")
	}
	if err := safely(func() error { return snk.Commit(ctx) }); err != nil {
		r.abort(ctx, snk)
		// A sink that fences its commit itself (an object store's writer marker) refuses
		// a writer a newer one took over from: that is a lost lease, not a broken pipeline.
		return r.fenceFailure(0, fmt.Errorf("commit: %w", err))
	}
	if r.durable == AtEnd {
		if err := r.save(ctx, 0); err != nil {
			return err
		}
	}
	return nil
}

// stop ends a cancelled or timed-out run at a page boundary: a PerPage sink keeps (commits)
// what it confirmed, an AtEnd sink discards everything, so nothing half-written looks
// complete.
func (r *runner) stop(ctx, wctx context.Context, snk Sink) error {
	if r.durable == PerPage && r.fenced != nil {
		if err := r.commitFenced(wctx, r.position(), "commit after stop"); err != nil {
			return err
		}
	} else if r.durable == PerPage {
		if err := safely(func() error { return snk.Commit(wctx) }); err != nil {
			r.abort(wctx, snk)
			return r.fail(RoleSink, 0, fmt.Errorf("commit after stop: %w", err))
		}
	} else {
		r.abort(wctx, snk)
	}
	return r.stopped(ctx)
}

// stopped is the error for a run whose context ended: a timeout Failure or a wrapped
// cancellation (with the caller's cause when it gave one).
func (r *runner) stopped(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, errTimeout) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		limit := "its deadline"
		if r.job.Timeout > 0 {
			limit = r.job.Timeout.String()
		}
		return &Failure{Code: run.CodeTimeout, Err: &timeoutError{limit: limit, pages: r.stats.Pages}}
	}
	if cause != nil && !errors.Is(cause, ctx.Err()) {
		return fmt.Errorf("cancelled after %d confirmed pages: %w (%w)", r.stats.Pages, ctx.Err(), cause)
	}
	return fmt.Errorf("cancelled after %d confirmed pages: %w", r.stats.Pages, ctx.Err())
}

func (r *runner) save(ctx context.Context, page int) error {
	if r.last == nil || r.job.State == nil {
		return nil
	}
	if err := r.job.State.Save(ctx, r.job.StateKey, *r.last); err != nil {
		return &Failure{Code: run.CodePipelineError, Role: RoleState, Page: page,
			Err: fmt.Errorf("save bookmark %q: %w", r.job.StateKey, err)}
	}
	return nil
}

func (r *runner) abort(ctx context.Context, snk Sink) {
	if err := safely(func() error { return snk.Abort(ctx) }); err != nil {
		r.log.Warn("sink abort failed", "sink", r.cfg.Sink.Type, "error", err)
	}
}

func (r *runner) closeSource(src Source) {
	if err := safely(src.Close); err != nil {
		r.log.Warn("source close failed", "source", r.cfg.Source.Type, "error", err)
	}
}

// fail builds the Failure for a connector error; panics keep their stack in the log only.
func (r *runner) fail(role string, page int, err error) error {
	typ := r.cfg.Source.Type
	if role == RoleSink {
		typ = r.cfg.Sink.Type
	}
	var pe *PanicError
	if errors.As(err, &pe) {
		r.log.Error("connector panicked", "role", role, "connector", typ, "page", page,
			"panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
	}
	code := run.CodePipelineError
	if c, ok := refusalCode(err); ok {
		code = c
	}
	return &Failure{Code: code, Connector: typ, Role: role, Page: page, Err: err}
}

// refusalCode is the run error code of a confinement refusal (SPEC §14.1) err wraps.
func refusalCode(err error) (run.ErrorCode, bool) {
	if c := reach.CodeOf(err); c != "" {
		return run.ErrorCode(c), true
	}
	return "", false
}
