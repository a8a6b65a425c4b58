package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/pager"
	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

type source struct {
	db     *sql.DB
	sc     *scrubber
	stmt   *sql.Stmt // the prepared read when it has bind parameters
	rows   *sql.Rows
	cancel context.CancelFunc // ends the query; the rows outlive OpenSource's context
	conv   []converter
	cols   []string
	ptrs   []any
	slab   []any
	pages  *pager.Pager
	ended  bool
}

// converter turns what the driver scanned into a page value.
type converter func(v any) (any, error)

// OpenSource connects and starts the query.
func (c *Connector) OpenSource(ctx context.Context, req execute.ReadRequest) (execute.Source, error) {
	raw, err := cfg.String(req.Config, "connection_url", "")
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	query, err := sqlspec.Query(req.Config)
	if err == nil {
		query, err = sqlspec.Narrow(query, req.Config, req.Shard, quote)
	}
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	batch, err := cfg.BatchSize(req.BatchSize, req.Config)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	db, sc, err := open(ctx, req.Reach, raw, req.Config)
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	s := &source{db: db, sc: sc}
	if err := s.start(ctx, query, batch, req.Incremental); err != nil {
		if s.rows != nil {
			s.cancel()
			s.rows.Close()
		}
		s.closeStmt()
		db.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("mysql: %w", ctx.Err())
		}
		return nil, fmt.Errorf("mysql: %w", sc.Wrap(err))
	}
	return s, nil
}

func (s *source) start(ctx context.Context, query pipeline.Statement, batch int, inc *execute.Incremental) error {
	text, binds := render(query), args(query)
	o := pager.Options{Batch: batch}
	if inc != nil {
		if inc.Cursor == "" {
			return errors.New("incremental replication needs a cursor column")
		}
		var after any
		if inc.After != nil {
			var err error
			if after, err = s.cursorArg(ctx, query, inc.Cursor, inc.After.Value); err != nil {
				return err
			}
		}
		text = render(incrementalQuery(query, inc.Cursor, after != nil))
		if after != nil {
			binds = append(binds, after)
		}
		o.Cursor, o.Exact = inc.Cursor, inc.Exact
	}
	qctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	rows, stmt, err := bound(qctx, s.db, text, binds)
	s.stmt = stmt
	stop()
	if err != nil {
		cancel()
		if inc != nil && errNumber(err) == 1054 {
			return fmt.Errorf("query: %w (is the cursor column %q a column of the query?)", err, inc.Cursor)
		}
		return fmt.Errorf("query: %w", err)
	}
	s.rows, s.cancel = rows, cancel
	types, err := rows.ColumnTypes()
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	o.CursorAt = -1
	for _, t := range types {
		s.cols = append(s.cols, t.Name())
		s.conv = append(s.conv, converterFor(t.DatabaseTypeName()))
	}
	if inc != nil {
		if o.CursorAt, err = sqlspec.CursorAt(s.cols, inc.Cursor); err != nil {
			return err
		}
	}
	o.Columns = s.cols
	s.ptrs = make([]any, len(s.cols))
	s.pages = pager.New(s.scan, o)
	return nil
}

// incrementalQuery wraps query so it returns the rows past the bookmark (?), ordered
// by the cursor.
func incrementalQuery(query pipeline.Statement, cursorCol string, after bool) pipeline.Statement {
	if !after {
		return sqlspec.IncrementalQuery(query, quote(cursorCol), "")
	}
	return sqlspec.IncrementalQuery(query, quote(cursorCol), "?")
}

// cursorArg turns a bookmark value back into a statement argument of the cursor
// column's type: times were bookmarked as RFC 3339 text, which a DATETIME comparison
// would read as a string. The column's type comes from describing the query.
func (s *source) cursorArg(ctx context.Context, query pipeline.Statement, col string, v any) (any, error) {
	types, err := describe(ctx, s.db, query)
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		if t.Name() != col {
			continue
		}
		switch t.DatabaseTypeName() {
		case "DATETIME", "TIMESTAMP", "DATE":
			if str, ok := v.(string); ok {
				if tm, err := time.Parse(time.RFC3339Nano, str); err == nil {
					return tm, nil
				}
			}
		}
		return v, nil
	}
	return nil, fmt.Errorf("the cursor column %q is not a column of the query", col)
}

// converterFor maps a column's database type onto page values: text types → string,
// binary types → []byte, DECIMAL → string (every digit kept), JSON → decoded; the driver
// already made integers int64 (uint64 for large unsigned ones), floats and times.
func converterFor(typ string) converter {
	switch typ {
	case "BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY", "BIT", "GEOMETRY":
		return func(v any) (any, error) { return v, nil }
	case "JSON":
		return func(v any) (any, error) {
			b, ok := v.([]byte)
			if !ok {
				return normalize(v), nil
			}
			var out any
			dec := json.NewDecoder(strings.NewReader(string(b)))
			dec.UseNumber()
			if err := dec.Decode(&out); err != nil {
				return nil, err
			}
			return sqlspec.JSONNumbers(out), nil
		}
	}
	return func(v any) (any, error) { return normalize(v), nil }
}

func normalize(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case uint64:
		if x > math.MaxInt64 {
			return strconv.FormatUint(x, 10)
		}
		return int64(x)
	case float32:
		return float64(x)
	case time.Time:
		return x.UTC()
	}
	return v
}

func (s *source) Next(ctx context.Context) (*execute.Page, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	if s.ended {
		return nil, io.EOF
	}
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()
	p, err := s.pages.Next()
	return sqlspec.PageOf(ctx, "mysql", p, transient(err), &s.ended, s.sc)
}

// scan reads the next row; nil, nil at the end.
func (s *source) scan() ([]any, error) {
	if !s.rows.Next() {
		if err := s.rows.Err(); err != nil {
			return nil, fmt.Errorf("query: %w", err)
		}
		return nil, nil
	}
	n := len(s.cols)
	if len(s.slab) < n {
		s.slab = make([]any, max(n, 4096))
	}
	vals := s.slab[:n:n]
	s.slab = s.slab[n:]
	for i := range vals {
		s.ptrs[i] = &vals[i]
	}
	if err := s.rows.Scan(s.ptrs...); err != nil {
		return nil, fmt.Errorf("read row: %w", err)
	}
	for i, v := range vals {
		if v == nil {
			continue
		}
		c, err := s.conv[i](v)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", s.cols[i], err)
		}
		vals[i] = c
	}
	return vals, nil
}

func (s *source) Close() error {
	s.cancel()
	err := s.rows.Close()
	s.closeStmt()
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("mysql: close: %w", s.sc.Wrap(err))
	}
	return nil
}

func (s *source) closeStmt() {
	if s.stmt != nil {
		s.stmt.Close()
		s.stmt = nil
	}
}
