package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

type sink struct {
	db       *sql.DB
	sc       *scrubber
	opts     sinkOptions
	table    *table // nil while the table does not exist
	tx       *sql.Tx
	failed   error // overwrite: a failed page dooms the transaction
	finished bool
	fence    fence
	args     []any
	sql      strings.Builder
}

// OpenSink connects and reads the table's columns; a missing table is an error unless
// create_table will create it from the first page.
func (c *Connector) OpenSink(ctx context.Context, req execute.WriteRequest) (execute.Sink, error) {
	raw, err := cfg.String(req.Config, "connection_url", "")
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	opts, oerr := sinkOptionsOf(req.Config)
	if oerr != nil {
		return nil, fmt.Errorf("mysql: %w", oerr)
	}
	db, sc, err := open(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	s := &sink{db: db, sc: sc, opts: opts}
	if s.table, err = loadTable(ctx, db, opts.table); err != nil {
		db.Close()
		return nil, s.explain(fmt.Errorf("read the table's columns: %w", err))
	}
	if s.table == nil && !opts.create {
		db.Close()
		return nil, fmt.Errorf("mysql: table %q does not exist; create it or set create_table: true", opts.table.String())
	}
	if s.table != nil && opts.mode == pipeline.Upsert {
		if err := s.checkUnique(ctx); err != nil {
			db.Close()
			return nil, s.explain(err)
		}
	}
	return s, nil
}

func (s *sink) Durability() execute.Durability {
	if s.opts.mode == pipeline.Overwrite {
		return execute.AtEnd
	}
	return execute.PerPage
}

func (s *sink) Write(ctx context.Context, p *execute.Page) error {
	return s.writePage(ctx, p, nil)
}

// writePage writes p; with pos (a fenced writer) the watermark moves to pos in the same
// transaction.
func (s *sink) writePage(ctx context.Context, p *execute.Page, pos *execute.Position) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mysql: %w", err)
	}
	if s.finished {
		return fmt.Errorf("mysql: table %q: write after the sink was finished", s.opts.table.String())
	}
	if s.failed != nil {
		return s.failed
	}
	if p.Encoded != nil {
		return fmt.Errorf("mysql: table %q: encoded pages are not supported", s.opts.table.String())
	}
	if len(p.Rows) == 0 {
		return nil
	}
	if err := s.prepare(ctx, p); err != nil {
		err = s.explain(err)
		if s.opts.mode == pipeline.Overwrite {
			s.failed = err
		}
		return err
	}
	if s.opts.mode == pipeline.Overwrite {
		err := s.beginOverwrite(ctx)
		if err == nil {
			err = s.rows(ctx, s.tx, p)
		}
		if err != nil {
			s.failed = s.explain(err)
			return s.failed
		}
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.explain(fmt.Errorf("begin: %w", err))
	}
	defer tx.Rollback() // no-op after Commit
	if err := s.rows(ctx, tx, p); err != nil {
		return s.explain(err)
	}
	if pos != nil {
		if err := s.fence.advance(ctx, tx, *pos); err != nil {
			return s.explain(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.explain(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// prepare creates a missing table and checks the page's columns. MySQL commits any open
// transaction on CREATE TABLE, so the table is created before the page's transaction
// (and stays, empty, when the page then fails).
func (s *sink) prepare(ctx context.Context, p *execute.Page) error {
	if len(p.Columns) == 0 {
		return errors.New("page has rows but no columns")
	}
	if s.table == nil {
		if s.tx != nil {
			return errors.New("the table disappeared during the overwrite")
		}
		for _, k := range s.opts.key {
			if !slices.Contains(p.Columns, k) {
				return fmt.Errorf("key column %q is not among the page's columns [%s], so the table cannot be created with it",
					k, strings.Join(p.Columns, ", "))
			}
		}
		if _, err := s.db.ExecContext(ctx, createTableSQL(s.opts.table, s.opts.key, p)); err != nil {
			return fmt.Errorf("create table: %w", err)
		}
		t, err := loadTable(ctx, s.db, s.opts.table)
		if err != nil {
			return fmt.Errorf("read the new table's columns: %w", err)
		}
		if t == nil {
			return errors.New("the created table is not visible")
		}
		s.table = t
	}
	var missing []string
	for _, c := range p.Columns {
		if !s.table.has(c) {
			missing = append(missing, fmt.Sprintf("%q", c))
		}
	}
	if len(missing) > 0 {
		what := "columns"
		if len(missing) == 1 {
			what = "column"
		}
		return fmt.Errorf("the table has no %s %s; add them to the table or leave them out of the source", what, strings.Join(missing, ", "))
	}
	if s.opts.mode == pipeline.Upsert || s.opts.mode == pipeline.Delete {
		for _, k := range s.opts.key {
			if !slices.Contains(p.Columns, k) {
				return fmt.Errorf("key column %q is not among the page's columns [%s]", k, strings.Join(p.Columns, ", "))
			}
		}
	}
	return nil
}

// rows writes the page in statements of bounded size.
func (s *sink) rows(ctx context.Context, tx *sql.Tx, p *execute.Page) error {
	if s.opts.mode == pipeline.Delete {
		return s.deleteRows(ctx, tx, p)
	}
	return s.insertRows(ctx, tx, p)
}

// beginOverwrite starts the run's transaction and empties the table in it.
func (s *sink) beginOverwrite(ctx context.Context) error {
	if s.tx != nil {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if s.table != nil {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+s.opts.table.quoted()); err != nil {
			tx.Rollback()
			return fmt.Errorf("empty the table for overwrite: %w", err)
		}
	}
	s.tx = tx
	return nil
}

func (s *sink) explain(err error) error {
	t := s.opts.table.String()
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("mysql: table %q: %w", t, err)
	}
	return fmt.Errorf("mysql: table %q: %w", t, s.sc.wrap(err))
}

// Commit ends an overwrite's transaction (an overwrite without pages still empties the
// table); the other modes made every page final already.
func (s *sink) Commit(ctx context.Context) error {
	return s.commit(ctx, nil)
}

func (s *sink) commit(ctx context.Context, pos *execute.Position) error {
	if s.finished {
		return fmt.Errorf("mysql: table %q: already committed or aborted", s.opts.table.String())
	}
	s.finished = true
	defer s.db.Close()
	if s.opts.mode != pipeline.Overwrite {
		if pos == nil {
			return nil
		}
		if err := s.fence.advance(ctx, s.db, *pos); err != nil {
			return s.explain(err)
		}
		return nil
	}
	if s.failed != nil {
		if s.tx != nil {
			s.tx.Rollback()
		}
		return fmt.Errorf("mysql: not committing the overwrite after a failed write: %w", s.failed)
	}
	if err := s.beginOverwrite(ctx); err != nil {
		return s.explain(err)
	}
	if pos != nil {
		if err := s.fence.advance(ctx, s.tx, *pos); err != nil {
			s.tx.Rollback()
			return s.explain(err)
		}
	}
	if err := s.tx.Commit(); err != nil {
		return s.explain(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// Abort rolls back an overwrite; pages of the other modes are final already.
func (s *sink) Abort(context.Context) error {
	if s.finished {
		return nil
	}
	s.finished = true
	var err error
	if s.tx != nil {
		if rerr := s.tx.Rollback(); rerr != nil && !errors.Is(rerr, sql.ErrTxDone) {
			err = fmt.Errorf("mysql: table %q: roll back: %w", s.opts.table.String(), s.sc.wrap(rerr))
		}
	}
	s.db.Close()
	return err
}

var _ execute.FencedSink = (*sink)(nil)
