package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlsink"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

type sink struct {
	sqlsink.Run
	sc    *scrubber
	opts  sinkOptions
	table *table // nil while the table does not exist
	fence sqlsink.Fence
	args  []any
	sql   strings.Builder
	retry retry.Policy
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
	db, sc, err := open(ctx, req.Reach, raw, req.Config)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	p, err := policy(req.Config)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("mysql: %w", err)
	}
	s := &sink{Run: sqlsink.Run{DB: db, Mode: opts.mode}, sc: sc, opts: opts, retry: p}
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

func (s *sink) Write(ctx context.Context, p *execute.Page) error {
	return s.writePage(ctx, p, nil)
}

// writePage writes p; with pos (a fenced writer) the watermark moves to pos in the same
// transaction.
func (s *sink) writePage(ctx context.Context, p *execute.Page, pos *execute.Position) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mysql: %w", err)
	}
	if s.Finished {
		return fmt.Errorf("mysql: table %q: write after the sink was finished", s.opts.table.String())
	}
	if s.Failed != nil {
		return s.Failed
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
			s.Failed = err
		}
		return err
	}
	if s.opts.mode == pipeline.Overwrite {
		err := s.BeginOverwrite(ctx, s.emptySQL())
		if err == nil {
			err = s.rows(ctx, s.Tx, p)
		}
		if err != nil {
			s.Failed = s.explain(err)
			return s.Failed
		}
		return nil
	}
	// A deadlock or lock wait timeout rolled the page back: write it again (the retry
	// block). Anything else fails the page, marked transient when a later attempt of the
	// run could get past it.
	err := retry.DoWhen(ctx, s.retry, rolledBack, func(ctx context.Context) error {
		return s.writeTx(ctx, p, pos)
	})
	if err != nil {
		return s.explain(transient(err))
	}
	return nil
}

// writeTx writes p (and moves the watermark to pos) in one transaction.
func (s *sink) writeTx(ctx context.Context, p *execute.Page, pos *execute.Position) error {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() // no-op after Commit
	if err := s.rows(ctx, tx, p); err != nil {
		return err
	}
	if pos != nil {
		if err := s.advance(ctx, tx, *pos); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
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
		if s.Tx != nil {
			return errors.New("the table disappeared during the overwrite")
		}
		if k, ok := sqlsink.MissingKey(p.Columns, s.opts.key); ok {
			return fmt.Errorf("key column %q is not among the page's columns [%s], so the table cannot be created with it",
				k, strings.Join(p.Columns, ", "))
		}
		if _, err := s.DB.ExecContext(ctx, createTableSQL(s.opts.table, s.opts.key, p)); err != nil {
			return fmt.Errorf("create table: %w", err)
		}
		t, err := loadTable(ctx, s.DB, s.opts.table)
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
		if k, ok := sqlsink.MissingKey(p.Columns, s.opts.key); ok {
			return fmt.Errorf("key column %q is not among the page's columns [%s]", k, strings.Join(p.Columns, ", "))
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

// emptySQL empties the table for an overwrite; "" while the table does not exist.
func (s *sink) emptySQL() string {
	if s.table == nil {
		return ""
	}
	return "DELETE FROM " + s.opts.table.quoted()
}

func (s *sink) explain(err error) error {
	t := s.opts.table.String()
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("mysql: table %q: %w", t, err)
	}
	return fmt.Errorf("mysql: table %q: %w", t, s.sc.Wrap(err))
}

// Commit ends an overwrite's transaction (an overwrite without pages still empties the
// table); the other modes made every page final already.
func (s *sink) Commit(ctx context.Context) error {
	return s.commit(ctx, nil)
}

func (s *sink) commit(ctx context.Context, pos *execute.Position) error {
	return s.Finish(ctx, pos, sqlsink.Ending{
		Name: "mysql", Table: s.opts.table.String(), Empty: s.emptySQL(),
		Advance: s.advance, Explain: s.explain,
	})
}

// Abort rolls back an overwrite; pages of the other modes are final already.
func (s *sink) Abort(context.Context) error {
	return s.Abandon("mysql", s.opts.table.String(), s.sc.Wrap)
}

var _ execute.FencedSink = (*sink)(nil)
