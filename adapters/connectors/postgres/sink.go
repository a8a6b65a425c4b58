package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// stageTable is the session's temporary table that upsert and delete pages are copied
// into before one statement merges them into the target.
const stageTable = "pg_temp.sluice_stage"

type sink struct {
	conn      *pgx.Conn
	sc        *scrubber
	opts      sinkOptions
	bookmarks bool   // pages carry bookmarks: each must be final when Write returns
	table     *table // nil while the table does not exist
	plan      *plan
	enc       *execute.Encoding // the encoding accepted for passed-through pages
	stage     []string          // columns of the stage table; nil when there is none
	tx        pgx.Tx            // overwrite: the one transaction of the run
	failed    error             // overwrite: a failed page dooms the transaction
	finished  bool
	buf, js   []byte
	fence     fence
	stream    *copyStream // the run's one COPY, for pages that stream (see streams)
	textOnly  bool        // a page went as text: the rest of the run does too (copybinary.go)
	retry     retry.Policy
	async     bool // the session commits without waiting for the WAL flush
	unsynced  bool // a page was committed that way and is not known to be durable yet
}

// OpenSink connects and reads the table's columns; a missing table is an error unless
// create_table will create it from the first page.
func (c *Connector) OpenSink(ctx context.Context, req execute.WriteRequest) (execute.Sink, error) {
	raw, err := cfg.String(req.Config, "connection_url", "")
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	opts, oerr := sinkOptionsOf(req.Config)
	if oerr != nil {
		return nil, fmt.Errorf("postgres: %w", oerr)
	}
	p, err := policy(req.Config)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	conn, sc, err := connect(ctx, req.Reach, raw, p, opts.table.schema, opts.watermark.schema)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &sink{conn: conn, sc: sc, opts: opts, bookmarks: req.Bookmarks, retry: p}
	if s.table, err = loadTable(ctx, conn, opts.table); err != nil {
		s.close()
		return nil, s.explain(pgErr("read the table's columns: %s", err))
	}
	if s.table == nil && !opts.create {
		s.close()
		return nil, fmt.Errorf("postgres: %w", missingTable(opts.table))
	}
	if s.table != nil && opts.jsonb {
		if _, ok := s.table.lookup(opts.jsonCol); !ok {
			s.close()
			return nil, fmt.Errorf("postgres: table %q has no column %q for column_mapping: jsonb; add a jsonb column or set jsonb_column",
				opts.table.String(), opts.jsonCol)
		}
	}
	return s, nil
}

// Durability is AtEnd for overwrite and for passed-through pages that stream into one
// COPY (see streams; the executor asks again once the sink accepted an encoding).
func (s *sink) Durability() execute.Durability {
	if s.opts.mode == pipeline.Overwrite || s.streams() {
		return execute.AtEnd
	}
	return execute.PerPage
}

// AcceptEncoding takes COPY text rows from a PostgreSQL source when they can go into the
// table unchanged: auto_map, every column present (or a table to create), key columns
// among them.
func (s *sink) AcceptEncoding(_ context.Context, e execute.Encoding) bool {
	if e.Format != CopyText || s.opts.jsonb || len(e.Columns) == 0 || len(e.Types) != len(e.Columns) {
		return false
	}
	if s.opts.mode == pipeline.Upsert || s.opts.mode == pipeline.Delete {
		for _, k := range s.opts.key {
			if !slices.Contains(e.Columns, k) {
				return false
			}
		}
	}
	if s.table != nil {
		for _, c := range e.Columns {
			if _, ok := s.table.lookup(c); !ok {
				return false
			}
		}
	}
	s.enc = &e
	return true
}

func (s *sink) Write(ctx context.Context, p *execute.Page) error {
	return s.writePage(ctx, p, nil)
}

// writePage writes p; with pos (a fenced writer) the watermark moves to pos in the same
// transaction.
func (s *sink) writePage(ctx context.Context, p *execute.Page, pos *execute.Position) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if s.finished {
		return fmt.Errorf("postgres: table %q: write after the sink was finished", s.opts.table.String())
	}
	if s.failed != nil {
		return s.failed
	}
	if p.Encoded != nil && (s.enc == nil || p.Encoded.Format != s.enc.Format) {
		return fmt.Errorf("postgres: table %q: page encoded as %q, which this sink did not accept", s.opts.table.String(), p.Encoded.Format)
	}
	if p.Len() == 0 {
		return nil
	}
	var err error
	if s.streams() {
		if err = s.writeStream(ctx, p); err != nil {
			s.failed = s.explain(err)
			return s.failed
		}
		return nil
	}
	if s.opts.mode == pipeline.Overwrite {
		if err = s.beginRun(ctx); err == nil {
			err = s.writeIn(ctx, p)
		}
		if err != nil {
			s.failed = s.explain(err)
			return s.failed
		}
		return nil
	}
	// A deadlock or serialization failure rolled the page back: write it again (the
	// retry block). Anything else fails the page, marked transient when a later attempt
	// of the run could get past it.
	err = retry.DoWhen(ctx, s.retry, rolledBack, func(ctx context.Context) error {
		return s.writeOwnTx(ctx, p, pos)
	})
	if err != nil {
		return s.explain(transient(err))
	}
	return nil
}

// writeOwnTx writes one page in its own transaction. A plain append to an existing table
// needs none: one COPY is atomic on its own.
func (s *sink) writeOwnTx(ctx context.Context, p *execute.Page, pos *execute.Position) error {
	if err := s.commitMode(ctx, pos != nil || p.Bookmark == nil); err != nil {
		return err
	}
	if pos == nil && s.table != nil && s.opts.mode == pipeline.Append {
		return s.writeIn(ctx, p)
	}
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	// What the transaction changes in the session is undone with it.
	tbl, plan, stage := s.table, s.plan, s.stage
	undo := func() {
		s.table, s.plan, s.stage = tbl, plan, stage
		tx.Rollback(context.WithoutCancel(ctx))
	}
	if err := s.writeIn(ctx, p); err != nil {
		undo()
		return err
	}
	if pos != nil {
		if err := s.fence.advance(ctx, s.conn, *pos); err != nil {
			undo()
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		undo()
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// commitMode lets page commits skip waiting for the WAL flush when that cannot lose a
// row: when no bookmark will be saved for the page (a full read), or when the page's
// position commits in the same transaction (exactly-once: a crash loses rows and position
// together). A page whose bookmark goes to another store commits synchronously, and that
// flush makes every earlier commit durable too (the WAL is flushed in order); the sink's
// end flushes once more, so a finished run is durable. Waiting for a flush per page costs
// a quarter of the throughput of a COPY passthrough.
func (s *sink) commitMode(ctx context.Context, async bool) error {
	if async == s.async {
		s.unsynced = s.unsynced || async
		return nil
	}
	setting := "on"
	if async {
		setting = "off"
	}
	if _, err := s.conn.Exec(ctx, "SET synchronous_commit = "+setting); err != nil {
		return pgErr("%s", err)
	}
	s.async = async
	s.unsynced = s.unsynced || async
	return nil
}

// flush makes every page committed so far durable: a synchronous commit of a transaction
// with an id writes and flushes a commit record, and with it all WAL before it.
func (s *sink) flush(ctx context.Context) error {
	if !s.unsynced {
		return nil
	}
	if err := s.commitMode(ctx, false); err != nil {
		return err
	}
	if _, err := s.conn.Exec(ctx, "BEGIN; SELECT txid_current(); COMMIT"); err != nil {
		return pgErr("flush: %s", err)
	}
	s.unsynced = false
	return nil
}

// writeIn writes p on the connection, inside whatever transaction is open.
func (s *sink) writeIn(ctx context.Context, p *execute.Page) error {
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
	switch s.opts.mode {
	case pipeline.Upsert, pipeline.Delete:
		if err := s.ensureStage(ctx, pl.targets); err != nil {
			return err
		}
		if err := s.copyIn(ctx, stageTable, pl.targets, data, bin); err != nil {
			return err
		}
		if s.opts.mode == pipeline.Delete {
			if _, err := s.conn.Exec(ctx, deleteSQL(s.opts.table, pl)); err != nil {
				return pgErr("%s", err)
			}
			return nil
		}
		return s.merge(ctx, pl)
	}
	return s.copyIn(ctx, s.opts.table.quoted(), pl.targets, data, bin)
}

// copyIn runs one COPY of data: text rows, or binary tuples (framed here).
func (s *sink) copyIn(ctx context.Context, into string, cols []string, data []byte, bin bool) error {
	sql := "COPY " + into + " (" + quoteAll(cols) + ") FROM STDIN"
	var r io.Reader = bytes.NewReader(data)
	if bin {
		sql += " (FORMAT binary)"
		r = io.MultiReader(bytes.NewReader(copyBinaryHeader), r, bytes.NewReader(copyBinaryTrailer))
	}
	_, err := s.conn.PgConn().CopyFrom(ctx, r, sql)
	if err != nil {
		return pgErr("%s", err)
	}
	return nil
}

// create makes the missing table from the first page (or the passed-through columns'
// own types) and reads it back, in case another writer created it first: then the page
// goes into that table, and columns it lacks fail the page naming them.
func (s *sink) create(ctx context.Context, p *execute.Page) error {
	cols, types, err := s.createColumns(p)
	if err != nil {
		return err
	}
	// Always inside the page's (or the run's) transaction, which holds the lock until it ends.
	if err := createTable(ctx, s.conn, s.opts.table, createTableSQL(s.opts.table, cols, types, s.opts.key)); err != nil {
		return err
	}
	t, err := loadTable(ctx, s.conn, s.opts.table)
	if err != nil {
		return pgErr("read the new table's columns: %s", err)
	}
	if t == nil {
		return errors.New("the created table is not visible")
	}
	s.table, s.plan = t, nil
	return nil
}

// ensureStage (re)creates the stage table with cols, typed like the target's columns.
// ON COMMIT DELETE ROWS empties it at every commit, so each page starts from nothing.
func (s *sink) ensureStage(ctx context.Context, cols []string) error {
	if slices.Equal(s.stage, cols) {
		return nil
	}
	stmt := "DROP TABLE IF EXISTS " + stageTable + "; CREATE TEMPORARY TABLE sluice_stage ON COMMIT DELETE ROWS AS SELECT " +
		quoteAll(cols) + " FROM " + s.opts.table.quoted() + " WITH NO DATA"
	if _, err := s.conn.Exec(ctx, stmt); err != nil {
		return pgErr("create the stage table: %s", err)
	}
	s.stage = slices.Clone(cols)
	return nil
}

// merge upserts the stage into the table. ON CONFLICT refuses to update one row twice, so
// a page holding a key twice is merged again keeping each key's last row; trying the
// plain statement first (behind a savepoint) spares the common page the sort that costs.
func (s *sink) merge(ctx context.Context, pl *plan) error {
	_, err := s.conn.Exec(ctx, "SAVEPOINT sluice_merge; "+upsertSQL(s.opts.table, pl, false))
	if sqlState(err) == "21000" {
		_, err = s.conn.Exec(ctx, "ROLLBACK TO SAVEPOINT sluice_merge; "+upsertSQL(s.opts.table, pl, true))
	}
	if err != nil {
		return pgErr("%s", err)
	}
	return nil
}

// upsertSQL merges the stage into the table. With dedupe, DISTINCT ON keeps the last row
// of each key in the page (the stage is filled by one COPY into an empty table, so its
// physical order is the page's).
func upsertSQL(t tableName, pl *plan, dedupe bool) string {
	cols := quoteAll(pl.targets)
	keys := quoteAll(pl.keys)
	var b strings.Builder
	if dedupe {
		b.WriteString("INSERT INTO " + t.quoted() + " (" + cols + ") SELECT DISTINCT ON (" + keys + ") " + cols +
			" FROM " + stageTable + " ORDER BY " + keys + ", ctid DESC ON CONFLICT (" + keys + ") DO ")
	} else {
		b.WriteString("INSERT INTO " + t.quoted() + " (" + cols + ") SELECT " + cols + " FROM " + stageTable +
			" ON CONFLICT (" + keys + ") DO ")
	}
	var set []string
	for _, c := range pl.targets {
		if !slices.Contains(pl.keys, c) {
			set = append(set, quote(c)+" = EXCLUDED."+quote(c))
		}
	}
	if len(set) == 0 {
		b.WriteString("NOTHING")
	} else {
		b.WriteString("UPDATE SET " + strings.Join(set, ", "))
	}
	return b.String()
}

// deleteSQL deletes the table rows whose key equals a staged row's key (a NULL key
// matches nothing, as in any SQL comparison).
func deleteSQL(t tableName, pl *plan) string {
	conds := make([]string, len(pl.keys))
	for i, k := range pl.keys {
		conds[i] = "sluice_t." + quote(k) + " = sluice_s." + quote(k)
	}
	return "DELETE FROM " + t.quoted() + " AS sluice_t USING " + stageTable + " AS sluice_s WHERE " + strings.Join(conds, " AND ")
}

// beginRun starts the run's one transaction; for overwrite it empties the table in it.
// DELETE rather than TRUNCATE: readers keep seeing the old rows until the commit.
func (s *sink) beginRun(ctx context.Context) error {
	if s.tx != nil {
		return nil
	}
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if s.table != nil && s.opts.mode == pipeline.Overwrite {
		if _, err := s.conn.Exec(ctx, "DELETE FROM "+s.opts.table.quoted()); err != nil {
			tx.Rollback(context.WithoutCancel(ctx))
			return pgErr("empty the table for overwrite: %s", err)
		}
	}
	s.tx = tx
	return nil
}

// explain names the connector and the table and says what to change for the errors
// that have a known remedy.
func (s *sink) explain(err error) error {
	t := s.opts.table.String()
	switch sqlState(err) {
	case "42P10":
		err = fmt.Errorf("upsert needs a PRIMARY KEY or UNIQUE constraint on (%s); create one, e.g. ALTER TABLE %s ADD PRIMARY KEY (%s): %w",
			strings.Join(s.opts.key, ", "), t, strings.Join(s.opts.key, ", "), err)
	}
	return fmt.Errorf("postgres: table %q: %w", t, s.sc.Wrap(err))
}

// Commit ends an overwrite's transaction (an overwrite without pages still empties the
// table); the other modes made every page final already.
func (s *sink) Commit(ctx context.Context) error {
	return s.commit(ctx, nil)
}

func (s *sink) commit(ctx context.Context, pos *execute.Position) error {
	if s.finished {
		return fmt.Errorf("postgres: table %q: already committed or aborted", s.opts.table.String())
	}
	s.finished = true
	defer s.close()
	if s.stream != nil {
		if err := s.stream.finish(nil); err != nil && s.failed == nil {
			s.failed = s.explain(err)
		}
	}
	if s.opts.mode != pipeline.Overwrite && s.tx == nil {
		if pos != nil {
			// A synchronous commit of the final position flushes every page before it.
			if err := s.commitMode(ctx, false); err != nil {
				return s.explain(err)
			}
			if err := s.fence.advance(ctx, s.conn, *pos); err != nil {
				return s.explain(err)
			}
			s.unsynced = false
		}
		if err := s.flush(ctx); err != nil {
			return s.explain(err)
		}
		return nil
	}
	if s.failed != nil {
		if s.tx != nil {
			s.tx.Rollback(context.WithoutCancel(ctx))
		}
		return fmt.Errorf("postgres: not committing the run after a failed write: %w", s.failed)
	}
	if err := s.beginRun(ctx); err != nil {
		return s.explain(err)
	}
	if pos != nil {
		if err := s.fence.advance(ctx, s.conn, *pos); err != nil {
			s.tx.Rollback(context.WithoutCancel(ctx))
			return s.explain(err)
		}
	}
	if err := s.tx.Commit(ctx); err != nil {
		return s.explain(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// Abort rolls back an overwrite; pages of the other modes are final already.
func (s *sink) Abort(ctx context.Context) error {
	if s.finished {
		return nil
	}
	s.finished = true
	var err error
	if s.stream != nil {
		s.stream.finish(errAborted) // CopyFail: the server discards the COPY
	}
	if s.tx != nil {
		if rerr := s.tx.Rollback(context.WithoutCancel(ctx)); rerr != nil && !errors.Is(rerr, pgx.ErrTxClosed) {
			err = fmt.Errorf("postgres: table %q: roll back: %w", s.opts.table.String(), s.sc.Wrap(rerr))
		}
	}
	s.close()
	return err
}

func (s *sink) close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	s.conn.Close(ctx)
}

var (
	_ execute.FencedSink      = (*sink)(nil)
	_ execute.PassthroughSink = (*sink)(nil)
)
