package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/cursor"
	"github.com/sluicehq/sluice/adapters/connectors/internal/pager"
	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// stmtName is the source's prepared statement; named, so that the helper queries pgx
// runs on the same connection cannot replace it.
const stmtName = "sluice_source"

// CopyText is the Encoding format of pages passed through as PostgreSQL COPY text rows.
const CopyText = "postgres/copy-text"

type source struct {
	conn     *pgx.Conn
	sc       *scrubber
	query    pipeline.Statement // the user's query, trimmed, with its bind parameters
	args     [][]byte
	bindTyps []string // the server's types of the query's bind parameters (COPY needs them)
	formats  []int16
	decoders []decoder
	cols     []string
	types    []string // the columns' type names; only for reads that can pass through
	batch    int
	qctx     context.Context    // the statement's context: it outlives OpenSource's
	cancel   context.CancelFunc // ends the statement
	rr       *pgconn.ResultReader
	pages    *pager.Pager
	slab     []any
	copy     *copyOut // set once UseEncoding switched to COPY text pages
	ended    bool
}

// OpenSource connects, prepares the query (so a broken query fails here) and describes
// its columns; rows are fetched from the first Next on.
func (c *Connector) OpenSource(ctx context.Context, req execute.ReadRequest) (execute.Source, error) {
	raw, err := cfg.String(req.Config, "connection_url", "")
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	query, err := sqlspec.Query(req.Config)
	if err == nil {
		query, err = sqlspec.Narrow(query, req.Config, req.Shard, quote)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	batch, err := cfg.BatchSize(req.BatchSize, req.Config)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	p, err := policy(req.Config)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	conn, sc, err := connect(ctx, req.Reach, raw, p)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &source{conn: conn, sc: sc, query: query, batch: batch}
	if err := s.prepare(ctx, req.Incremental); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("postgres: %w", sc.Wrap(err))
	}
	s.qctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// prepare prepares the statement the read runs and picks each column's decoder.
func (s *source) prepare(ctx context.Context, inc *execute.Incremental) error {
	text := render(s.query, 1)
	var oids []uint32
	s.args, oids = bindArgs(s.query)
	var after any
	if inc != nil {
		if inc.Cursor == "" {
			return errors.New("incremental replication needs a cursor column")
		}
		if inc.After != nil {
			after = inc.After.Value
		}
		text = incrementalQuery(s.query, inc.Cursor, after != nil)
	}
	sd, err := s.conn.PgConn().Prepare(ctx, stmtName, text, oids)
	if err != nil {
		if inc != nil && sqlState(err) == "42703" {
			return pgErr("query: %s (is the cursor column "+quote(inc.Cursor)+" a column of the query?)", err)
		}
		return pgErr("query: %s", err)
	}
	m := s.conn.TypeMap()
	for _, f := range sd.Fields {
		s.cols = append(s.cols, f.Name)
		format, dec := columnCodec(m, f.DataTypeOID)
		s.formats = append(s.formats, format)
		s.decoders = append(s.decoders, dec)
	}
	o := pager.Options{Columns: s.cols, Batch: s.batch}
	if inc != nil {
		cursorAt, err := sqlspec.CursorAt(s.cols, inc.Cursor)
		if err != nil {
			return err
		}
		o.Cursor, o.CursorAt, o.Exact = inc.Cursor, cursorAt, inc.Exact
		if after != nil {
			s.args = append(s.args, []byte(cursor.Text(after)))
		}
	} else if s.types, err = typeNames(ctx, s.conn, sd.Fields); err != nil {
		return pgErr("describe the query's columns: %s", err)
	} else if s.bindTyps, err = paramTypes(ctx, s.conn, sd.ParamOIDs); err != nil {
		return pgErr("describe the query's parameters: %s", err)
	}
	s.pages = pager.New(s.scan, o)
	return nil
}

// incrementalQuery wraps query so it returns the rows past the bookmark (the parameter
// after the query's own), ordered by the cursor.
func incrementalQuery(query pipeline.Statement, cursorCol string, after bool) string {
	if !after {
		return render(sqlspec.IncrementalQuery(query, quote(cursorCol), ""), 1)
	}
	return render(sqlspec.IncrementalQuery(query, quote(cursorCol), "$"+strconv.Itoa(len(query.Args)+1)), 1)
}

// typeNames asks the database for the declared types of the result columns, which a sink
// creating its table from passed-through rows reuses.
func typeNames(ctx context.Context, conn *pgx.Conn, fields []pgconn.FieldDescription) ([]string, error) {
	oids := make([]uint32, len(fields))
	mods := make([]int32, len(fields))
	for i, f := range fields {
		oids[i], mods[i] = f.DataTypeOID, f.TypeModifier
	}
	rows, err := conn.Query(ctx, `SELECT format_type(t, NULLIF(m, -1)) FROM unnest($1::oid[], $2::int4[]) WITH ORDINALITY AS u(t, m, n) ORDER BY n`,
		oids, mods)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (s *source) Next(ctx context.Context) (*execute.Page, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if s.copy != nil {
		return s.copy.next(ctx)
	}
	if s.ended {
		return nil, io.EOF
	}
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()
	if s.rr == nil {
		s.rr = s.conn.PgConn().ExecPrepared(s.qctx, stmtName, s.args, nil, s.formats)
	}
	p, err := s.pages.Next()
	// A stream cut mid-read cannot resume page by page on this connection; the mark lets
	// a run-level retry (on: transient) try the run again.
	return sqlspec.PageOf(ctx, "postgres", p, transient(err), &s.ended, s.sc)
}

// scan decodes the next row; nil, nil after the last.
func (s *source) scan() ([]any, error) {
	if !s.rr.NextRow() {
		_, err := s.rr.Close()
		if err != nil {
			return nil, pgErr("query: %s", err)
		}
		return nil, nil
	}
	raw := s.rr.Values()
	n := len(s.decoders)
	if len(s.slab) < n {
		s.slab = make([]any, max(n, 4096))
	}
	vals := s.slab[:n:n]
	s.slab = s.slab[n:]
	for i, b := range raw {
		if b == nil {
			vals[i] = nil
			continue
		}
		v, err := s.decoders[i](b)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", s.cols[i], err)
		}
		vals[i] = v
	}
	return vals, nil
}

// Encoding offers COPY text pages for full reads; an incremental read needs decoded
// cursor values for its bookmarks.
func (s *source) Encoding() (execute.Encoding, bool) {
	if s.types == nil || s.rr != nil || s.copy != nil {
		return execute.Encoding{}, false
	}
	return execute.Encoding{Format: CopyText, Columns: s.cols, Types: s.types}, true
}

// UseEncoding starts `COPY (query) TO STDOUT`; its rows are cut into pages of batch rows.
func (s *source) UseEncoding(ctx context.Context) error {
	if _, ok := s.Encoding(); !ok {
		return errors.New("postgres: this read cannot pass rows through")
	}
	text, err := copyQuery(ctx, s.conn.PgConn(), s.query, s.bindTyps)
	if err != nil {
		return fmt.Errorf("postgres: %w", s.sc.Wrap(err))
	}
	s.copy = startCopyOut(s.qctx, s.conn.PgConn(), text, s.batch, s.sc)
	return nil
}

func (s *source) Close() error {
	s.cancel()
	if s.copy != nil {
		s.copy.wait()
	}
	if s.rr != nil {
		s.rr.Close() // already failed or drained; the cancelled context makes it quick
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := s.conn.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("postgres: close: %w", s.sc.Wrap(err))
	}
	return nil
}

var _ execute.PassthroughSource = (*source)(nil)
