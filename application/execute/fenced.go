package execute

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

// runFenced runs an exactly-once job (SPEC §1.7). The sink is opened and fenced before
// the source, because the position to resume from lives in the sink's watermark and not
// in the state store: only the watermark commits together with the rows.
func (r *runner) runFenced(ctx context.Context, srcConn SourceConnector, snkConn SinkConnector) error {
	if r.job.StateKey == "" {
		return &Failure{Code: run.CodeConfigError, Role: RoleState,
			Err: errors.New("delivery exactly_once needs a state key for the sink's watermark")}
	}
	snk, err := openSink(ctx, snkConn, r.writeRequest())
	if err == nil {
		err = safely(func() error { r.durable = snk.Durability(); return nil })
	}
	if err != nil {
		if ctx.Err() != nil {
			return r.stopped(ctx)
		}
		return r.fail(RoleSink, 0, fmt.Errorf("open: %w", err))
	}
	wctx := context.WithoutCancel(ctx)
	fs, ok := snk.(FencedSink)
	if !ok {
		r.abort(wctx, snk)
		return &Failure{Code: run.CodeConfigError, Role: RoleSink, Connector: r.cfg.Sink.Type, Err: fmt.Errorf(
			"sink %q cannot deliver exactly once (it has no transactional watermark); use delivery: at_least_once or a SQL sink",
			r.cfg.Sink.Type)}
	}
	var wm Watermark
	err = safely(func() error {
		var err error
		wm, err = fs.Fence(ctx, r.job.StateKey)
		return err
	})
	if err != nil {
		r.abort(wctx, snk)
		if ctx.Err() != nil {
			return r.stopped(ctx)
		}
		return r.fail(RoleSink, 0, fmt.Errorf("fence watermark %q: %w", r.job.StateKey, err))
	}
	if err := safely(func() error { r.durable = snk.Durability(); return nil }); err != nil {
		r.abort(wctx, snk)
		return r.fail(RoleSink, 0, err)
	}
	if r.job.Run != "" && wm.Position.CompletedBy == r.job.Run {
		// This run's read already reached the end and committed: only the history's
		// record of the finish was lost. Writing nothing is the exactly-once answer;
		// the fence taken above still refuses the earlier attempt, should it wake up.
		r.abort(wctx, snk)
		r.log.Info("exactly-once read already delivered by this run; writing nothing",
			"state_key", r.job.StateKey, "run", r.job.Run, "epoch", wm.Epoch)
		return nil
	}
	if err := r.resumeFrom(wm); err != nil {
		r.abort(wctx, snk)
		return err
	}
	r.fenced = fs
	r.log.Info("exactly-once writer fenced", "state_key", r.job.StateKey, "epoch", wm.Epoch,
		"bookmark", bookmarkValue(wm.Position), "rows_past_bookmark", wm.Position.Rows)

	src, err := openSource(ctx, srcConn, r.readRequest(r.incr))
	if err != nil {
		r.abort(wctx, snk)
		if ctx.Err() != nil {
			return r.stopped(ctx)
		}
		return r.fail(RoleSource, 0, fmt.Errorf("open: %w", err))
	}
	if err := r.negotiate(ctx, src, snk); err != nil {
		r.abort(wctx, snk)
		r.closeSource(src)
		return err
	}
	return r.pump(ctx, src, snk)
}

// resumeFrom takes the watermark's position as the run's starting point.
func (r *runner) resumeFrom(wm Watermark) error {
	pos := wm.Position
	if r.cfg.Replication.Type == pipeline.Incremental {
		if err := r.sameCursor(pos.Bookmark, RoleSink); err != nil {
			return err
		}
		r.incr = &Incremental{Cursor: r.cfg.Replication.Cursor, After: pos.Bookmark, Exact: true}
	} else if pos.Bookmark != nil {
		return &Failure{Code: run.CodeConfigError, Role: RoleSink, Err: fmt.Errorf(
			"watermark %q holds a bookmark on cursor %q but replication is full; set state.key to start a new watermark",
			r.job.StateKey, pos.Bookmark.Cursor)}
	}
	if pos.Rows < 0 {
		return &Failure{Code: run.CodePipelineError, Role: RoleSink, Err: fmt.Errorf(
			"watermark %q holds a negative row count %d", r.job.StateKey, pos.Rows)}
	}
	r.pos = Position{Bookmark: pos.Bookmark}
	r.skip = pos.Rows
	return nil
}

// writeFenced drops the rows an earlier writer already delivered, then writes the rest
// together with the position they reach. A page wholly delivered before is not written.
func (r *runner) writeFenced(ctx context.Context, n int, p *Page) error {
	total := int64(p.Len())
	if p.Bookmark != nil && r.incr != nil {
		b := *p.Bookmark
		if b.Cursor == "" {
			b.Cursor = r.incr.Cursor
		}
		r.pos = Position{Bookmark: &b}
	} else {
		r.pos.Rows += total
	}
	if r.skip > 0 {
		drop := min(r.skip, total)
		r.skip -= drop
		if drop == total {
			r.log.Debug("page already delivered", "page", n, "rows", total)
			return nil
		}
		p = tail(p, int(drop))
	}
	rows := int64(p.Len())
	pos := r.position()
	if err := safely(func() error { return r.fenced.WriteAt(ctx, p, pos) }); err != nil {
		return r.fenceFailure(n, err)
	}
	r.stats.Pages++
	r.stats.RowsWritten += rows
	r.confirmed(n, rows)
	return nil
}

// position is what the sink holds once the pages handed over so far are written: the
// rows still to drop were written by an earlier writer, so they count as delivered.
func (r *runner) position() Position {
	return Position{Bookmark: r.pos.Bookmark, Rows: r.pos.Rows + r.skip}
}

// commitFenced ends a fenced sink at pos; an AtEnd sink's pages become final here.
func (r *runner) commitFenced(ctx context.Context, pos Position, what string) error {
	if err := safely(func() error { return r.fenced.CommitAt(ctx, pos) }); err != nil {
		r.abort(ctx, r.fenced)
		return r.fenceFailure(0, fmt.Errorf("%s: %w", what, err))
	}
	return nil
}

// fenceFailure is a sink failure; a lost fence gets its own code, because the run did
// nothing wrong: a newer writer of the same state key took over.
func (r *runner) fenceFailure(page int, err error) error {
	f := r.fail(RoleSink, page, err).(*Failure)
	if errors.Is(err, run.ErrLeaseLost) {
		f.Code = run.CodeLeaseLost
	}
	return f
}

// tail is p without its first n rows; p must hold decoded rows.
func tail(p *Page, n int) *Page {
	q := *p
	q.Rows = p.Rows[n:]
	if len(p.Rows) > 0 {
		q.Bytes = p.Bytes * int64(len(q.Rows)) / int64(len(p.Rows))
	}
	return &q
}

func bookmarkValue(p Position) any {
	if p.Bookmark == nil {
		return nil
	}
	return p.Bookmark.Value
}
