package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlsink"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

type sink struct {
	sqlsink.Run
	opts    sinkOptions
	columns map[string]bool   // the table's columns, lower-cased (SQLite names are case-insensitive); nil while it does not exist
	fence   sqlsink.Fence     // exactly-once only
	pos     *execute.Position // set by WriteAt for the page being written
	retry   retry.Policy
}

// OpenSink opens (creating if needed) the database and checks the table exists, unless
// create_table will create it from the first page.
func (c *Connector) OpenSink(ctx context.Context, req execute.WriteRequest) (execute.Sink, error) {
	raw, err := cfg.String(req.Config, "connection_url", "")
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	p, params, err := splitURL(raw)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	opts, oerr := sinkOptionsOf(req.Config)
	if oerr != nil {
		return nil, fmt.Errorf("sqlite: %w", oerr)
	}
	path, err := dbPath(ctx, req.Reach, req.BaseDir, p)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(sqliteshim.ShimName, dsn(path, params, true))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	pol, err := policy(req.Config)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	s := &sink{Run: sqlsink.Run{DB: db, Mode: opts.mode}, opts: opts, retry: pol}
	// The first statement opens the file and turns WAL on, which SQLite can refuse at once
	// (SQLITE_BUSY without waiting out busy_timeout) while another writer is creating the
	// same file: retried like a busy page.
	if err := retry.DoWhen(ctx, pol, busy, s.loadColumns); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if s.columns == nil && !opts.create {
		db.Close()
		return nil, fmt.Errorf("sqlite: table %q does not exist in %s; create it or set create_table: true", opts.table.String(), path)
	}
	return s, nil
}

// loadColumns reads the table's columns; columns stays nil when the table is missing.
func (s *sink) loadColumns(ctx context.Context) error {
	q, args := "SELECT name FROM pragma_table_info(?)", []any{s.opts.table.name}
	if s.opts.table.schema != "" {
		q, args = "SELECT name FROM pragma_table_info(?, ?)", append(args, s.opts.table.schema)
	}
	rows, err := s.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return err
		}
		cols[strings.ToLower(name)] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(cols) > 0 {
		s.columns = cols
	}
	return nil
}

func (s *sink) Write(ctx context.Context, p *execute.Page) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if s.Finished {
		return fmt.Errorf("sqlite: table %q: write after the sink was finished", s.opts.table.String())
	}
	if s.Failed != nil {
		return s.Failed
	}
	if len(p.Rows) == 0 {
		return nil
	}
	var err error
	if s.Tx == nil && s.opts.mode != pipeline.Overwrite {
		// The page's own transaction rolled back when the database was busy: write it
		// again (the retry block).
		err = retry.DoWhen(ctx, s.retry, busy, func(ctx context.Context) error { return s.write(ctx, p) })
	} else {
		err = transient(s.write(ctx, p))
	}
	if err != nil {
		err = s.explain(err)
		if s.Tx != nil {
			s.Failed = err
		}
		return err
	}
	return nil
}

func (s *sink) write(ctx context.Context, p *execute.Page) error {
	if len(p.Columns) == 0 {
		return fmt.Errorf("page has rows but no columns")
	}
	tx := s.Tx
	if s.opts.mode == pipeline.Overwrite {
		if err := s.BeginOverwrite(ctx, s.emptySQL()); err != nil {
			return err
		}
		tx = s.Tx
	} else {
		var err error
		if tx, err = s.DB.BeginTx(ctx, nil); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		defer tx.Rollback() // no-op after Commit
	}
	created := false
	if s.columns == nil {
		if err := s.create(ctx, tx, p); err != nil {
			return err
		}
		created = true
	}
	if err := s.checkColumns(p.Columns); err != nil {
		return err
	}
	var err error
	if s.opts.mode == pipeline.Delete {
		err = deleteRows(ctx, tx, s.opts, p)
	} else {
		err = insertRows(ctx, tx, s.opts, p)
	}
	if err != nil {
		if created && s.Tx == nil {
			s.columns = nil // the CREATE TABLE rolls back with the page
		}
		return err
	}
	if s.Tx == nil && s.pos != nil {
		if err := s.advance(ctx, tx, *s.pos); err != nil {
			if created {
				s.columns = nil
			}
			return err
		}
	}
	if s.Tx == nil {
		if err := tx.Commit(); err != nil {
			if created {
				s.columns = nil
			}
			return fmt.Errorf("commit: %w", err)
		}
	}
	return nil
}

// emptySQL empties the table for an overwrite; "" while the table does not exist.
func (s *sink) emptySQL() string {
	if s.columns == nil {
		return ""
	}
	return "DELETE FROM " + s.opts.table.quoted()
}

func (s *sink) create(ctx context.Context, tx *sql.Tx, p *execute.Page) error {
	if k, ok := sqlsink.MissingKey(p.Columns, s.opts.key); ok {
		return fmt.Errorf("key column %q is not among the page's columns %v, so the table cannot be created with it", k, p.Columns)
	}
	if _, err := tx.ExecContext(ctx, createTableSQL(s.opts.table, s.opts.key, p)); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	s.columns = make(map[string]bool, len(p.Columns))
	for _, c := range p.Columns {
		s.columns[strings.ToLower(c)] = true
	}
	return nil
}

func (s *sink) checkColumns(cols []string) error {
	for _, c := range cols {
		if !s.columns[strings.ToLower(c)] {
			return fmt.Errorf("the table has no column %q; add it to the table or leave it out of the source", c)
		}
	}
	if s.opts.mode == pipeline.Upsert || s.opts.mode == pipeline.Delete {
		if k, ok := sqlsink.MissingKey(cols, s.opts.key); ok {
			return fmt.Errorf("key column %q is not among the page's columns %v", k, cols)
		}
	}
	return nil
}

// explain names the table and turns SQLite's terse errors into what to change.
func (s *sink) explain(err error) error {
	t := s.opts.table.String()
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("sqlite: table %q: %w", t, err)
	}
	if strings.Contains(err.Error(), "ON CONFLICT clause does not match") {
		return fmt.Errorf("sqlite: table %q: upsert needs a PRIMARY KEY or UNIQUE index on %v; create one, e.g. CREATE UNIQUE INDEX ON %s (%s): %w",
			t, s.opts.key, t, strings.Join(s.opts.key, ", "), err)
	}
	return fmt.Errorf("sqlite: table %q: %w", t, err)
}

// Commit ends an overwrite's transaction (an overwrite with no pages still empties the
// table); other modes committed every page already.
func (s *sink) Commit(ctx context.Context) error {
	return s.commit(ctx, nil)
}

// commit ends the sink; with pos (a fenced writer) the watermark moves to pos too, in the
// overwrite's transaction or on its own.
func (s *sink) commit(ctx context.Context, pos *execute.Position) error {
	return s.Finish(ctx, pos, sqlsink.Ending{
		Name: "sqlite", Table: s.opts.table.String(), Empty: s.emptySQL(),
		Advance: s.advance, Explain: s.explain,
	})
}

// Abort rolls back an overwrite; pages of the other modes are already final.
func (s *sink) Abort(context.Context) error {
	return s.Abandon("sqlite", s.opts.table.String(), func(err error) error { return err })
}
