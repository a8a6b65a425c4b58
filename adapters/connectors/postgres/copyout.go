package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/application/execute"
)

// closeTimeout bounds the polite goodbye to the server when a connection closes.
const closeTimeout = 5 * time.Second

// errStopped ends a COPY whose reader went away.
var errStopped = errors.New("read stopped")

// copyOut runs one `COPY … TO STDOUT` in a goroutine and cuts its text rows into pages.
// The channel holds one page, so the database is read no faster than pages are taken.
type copyOut struct {
	pages chan *execute.Page
	done  chan struct{}
	err   error // set before pages is closed
	sc    *scrubber
}

func startCopyOut(ctx context.Context, conn *pgconn.PgConn, sql string, batch int, sc *scrubber) *copyOut {
	c := &copyOut{pages: make(chan *execute.Page, 1), done: make(chan struct{}), sc: sc}
	w := &pageWriter{batch: batch, out: c.pages, stop: ctx.Done()}
	go func() {
		defer close(c.done)
		_, err := conn.CopyTo(ctx, w, sql)
		if err == nil {
			err = w.flush()
		}
		c.err = err
		close(c.pages)
	}()
	return c
}

func (c *copyOut) next(ctx context.Context) (*execute.Page, error) {
	select {
	case p, ok := <-c.pages:
		if ok {
			return p, nil
		}
	case <-ctx.Done():
		return nil, fmt.Errorf("postgres: %w", ctx.Err())
	}
	switch {
	case c.err == nil:
		return nil, io.EOF
	case ctx.Err() != nil:
		return nil, fmt.Errorf("postgres: %w", ctx.Err())
	}
	return nil, fmt.Errorf("postgres: %w", c.sc.Wrap(pgErr("query: %s", c.err)))
}

func (c *copyOut) wait() {
	for range c.pages { //nolint:revive // drain so the goroutine can end
	}
	<-c.done
}

// pageWriter receives the COPY data (one or more whole rows per Write, each ending in a
// newline: COPY text escapes newlines inside values) and emits a page every batch rows.
type pageWriter struct {
	batch int
	buf   []byte
	rows  int
	out   chan<- *execute.Page
	stop  <-chan struct{}
}

func (w *pageWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			w.buf = append(w.buf, b...)
			break
		}
		w.buf = append(w.buf, b[:i+1]...)
		b = b[i+1:]
		w.rows++
		if w.rows == w.batch {
			if err := w.emit(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (w *pageWriter) emit() error {
	p := &execute.Page{Encoded: &execute.Encoded{Format: CopyText, Data: w.buf, Rows: w.rows}, Bytes: int64(len(w.buf))}
	select {
	case w.out <- p:
	case <-w.stop:
		return errStopped
	}
	w.buf = make([]byte, 0, cap(w.buf))
	w.rows = 0
	return nil
}

// flush emits the last, short page.
func (w *pageWriter) flush() error {
	if w.rows == 0 {
		return nil
	}
	return w.emit()
}
