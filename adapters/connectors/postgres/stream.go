package postgres

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// errAborted ends a streaming COPY that the run gave up on (CopyFail: nothing stays).
var errAborted = errors.New("the run was aborted")

// streams reports whether the sink writes the run as one COPY in one transaction: an
// append or overwrite whose pages carry no bookmarks (a full read) and that is not
// exactly-once. Per-page commits buy such a run nothing — a rerun reads everything again
// — while one COPY moves rows as fast as psql's own \copy (a COPY per page pays the
// statement's start, end and commit a hundred times per million rows), and a failed run
// leaves no partial copy for the next one to duplicate. Its pages become final together,
// on Commit (Durability AtEnd).
func (s *sink) streams() bool {
	return !s.bookmarks && s.fence.epoch == 0 &&
		(s.opts.mode == pipeline.Append || s.opts.mode == pipeline.Overwrite)
}

// writeStream adds p to the run's COPY, starting the transaction (emptying the table for
// overwrite, creating it when needed) and the COPY on the first page. Pages whose columns
// differ from the COPY's end it and start another in the same transaction.
func (s *sink) writeStream(ctx context.Context, p *execute.Page) error {
	if err := s.beginRun(ctx); err != nil {
		return err
	}
	if s.table == nil {
		if err := s.create(ctx, p); err != nil {
			return err
		}
	}
	cols := p.Columns
	if p.Encoded != nil {
		cols = s.enc.Columns
	}
	pl, err := s.planFor(cols)
	if err != nil {
		return err
	}
	data, bin := []byte(nil), false
	if p.Encoded != nil {
		data = p.Encoded.Data
	} else if data, bin, err = s.encodeAny(p, pl); err != nil {
		return err
	}
	if !bin {
		s.textOnly = true // switching formats costs a new COPY: once is enough
	}
	if s.stream != nil && (s.stream.plan != pl || s.stream.binary != bin) {
		if err := s.stream.finish(nil); err != nil {
			return err
		}
		s.stream = nil
	}
	if s.stream == nil {
		sql := "COPY " + s.opts.table.quoted() + " (" + quoteAll(pl.targets) + ") FROM STDIN"
		if bin {
			sql += " (FORMAT binary)"
		}
		s.stream = startCopy(ctx, s.conn.PgConn(), sql, pl, bin)
	}
	return s.stream.write(data)
}

// copyStream is one `COPY … FROM STDIN` fed page by page through a pipe that the driver
// forwards as the pages come; the server confirms all of them at once.
type copyStream struct {
	plan   *plan
	binary bool // COPY BINARY: the header went first, the trailer goes last
	pw     *io.PipeWriter
	done   chan error
	err    error // the COPY's outcome, once done delivered it
	over   bool
}

func startCopy(ctx context.Context, conn *pgconn.PgConn, sql string, pl *plan, binary bool) *copyStream {
	pr, pw := io.Pipe()
	c := &copyStream{plan: pl, binary: binary, pw: pw, done: make(chan error, 1)}
	wctx := context.WithoutCancel(ctx)
	var r io.Reader = pr
	if binary {
		r = io.MultiReader(bytes.NewReader(copyBinaryHeader), pr)
	}
	go func() {
		_, err := conn.CopyFrom(wctx, r, sql)
		c.done <- err
		if err == nil {
			err = io.ErrClosedPipe // a write after the end fails
		}
		pr.CloseWithError(err)
	}()
	return c
}

// write hands a page's rows to the COPY and returns once the driver took them (the pipe
// has no buffer, so the page's bytes may be reused). A row the server refused shows here
// or on the next write; the message names its line and column.
func (c *copyStream) write(data []byte) error {
	if _, err := c.pw.Write(data); err != nil {
		if ferr := c.finish(nil); ferr != nil {
			return ferr
		}
		return err
	}
	return nil
}

// finish ends the COPY: successfully (CopyDone) when abort is nil, else with CopyFail.
func (c *copyStream) finish(abort error) error {
	if !c.over {
		if abort != nil {
			c.pw.CloseWithError(abort)
		} else {
			if c.binary {
				c.pw.Write(copyBinaryTrailer) // a failed COPY shows in done below
			}
			c.pw.Close()
		}
		c.err = <-c.done
		c.over = true
	}
	if c.err != nil {
		return pgErr("%s", c.err)
	}
	return nil
}
