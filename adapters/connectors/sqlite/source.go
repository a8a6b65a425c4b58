package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/cursor"
	"github.com/sluicehq/sluice/adapters/connectors/internal/pager"
	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/state"
)

type source struct {
	db     *sql.DB
	rows   *sql.Rows
	cancel context.CancelFunc // ends the query; the rows outlive OpenSource's context
	cols   []string
	width  int // values scanned per row (columns, plus the raw cursor when incremental)
	batch  int
	cursor string // "" when not incremental
	exact  bool   // keep rows sharing a cursor value on one page (execute.Incremental.Exact)
	ptrs   []any
	slab   []any
	ahead  []any
	done   bool
}

// OpenSource opens the database read-only and starts the query.
func (c *Connector) OpenSource(ctx context.Context, req execute.ReadRequest) (execute.Source, error) {
	raw, err := cfg.String(req.Config, "connection_url", "")
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	p, params, err := splitURL(raw)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	query, err := sqlspec.Query(req.Config)
	if err == nil {
		query, err = sqlspec.Narrow(query, req.Config, req.Shard, quote)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	batch, err := cfg.BatchSize(req.BatchSize, req.Config)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	path, err := dbPath(ctx, req.Reach, req.BaseDir, p)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sqlite: database file %s does not exist", path)
		}
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	db, err := sql.Open(sqliteshim.ShimName, dsn(path, params, false))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &source{db: db, batch: batch}
	text, binds := render(query), args(query)
	if inc := req.Incremental; inc != nil {
		if inc.Cursor == "" {
			db.Close()
			return nil, fmt.Errorf("sqlite: incremental replication needs a cursor column")
		}
		s.cursor = inc.Cursor
		s.exact = inc.Exact
		var after any
		if inc.After != nil {
			after = inc.After.Value
		}
		text, binds = incrementalQuery(query, inc.Cursor, after)
	}
	qctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	rows, err := db.QueryContext(qctx, text, binds...)
	stop()
	if err != nil {
		cancel()
		db.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("sqlite: %w", ctx.Err())
		}
		if s.cursor != "" && strings.Contains(err.Error(), "no such column") {
			return nil, fmt.Errorf("sqlite: query: %w (is the cursor column %q a column of the query?)", err, s.cursor)
		}
		return nil, fmt.Errorf("sqlite: query: %w", err)
	}
	s.rows, s.cancel = rows, cancel
	cols, err := rows.Columns()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: query: %w", err)
	}
	s.width = len(cols)
	if s.cursor != "" {
		cols = cols[:len(cols)-1]
	}
	s.cols = cols
	s.ptrs = make([]any, s.width)
	return s, nil
}

// incrementalQuery wraps query so it returns rows past after, ordered by the cursor,
// with the cursor's raw value appended as an extra last column. The bookmark's argument
// follows the query's own.
func incrementalQuery(query pipeline.Statement, cursorCol string, after any) (string, []any) {
	c := "q." + quote(cursorCol)
	suffix := ") AS q"
	params := args(query)
	if after != nil {
		suffix += " WHERE " + c + " > ?"
		params = append(params, after)
	}
	return render(query.Wrap("SELECT q.*, +"+c+` AS "sluice_cursor__" FROM (`, suffix+" ORDER BY "+c)), params
}

// render writes a statement with SQLite's positional placeholders.
func render(s pipeline.Statement) string { return s.Render(func(int) string { return "?" }) }

// args are a statement's bind parameters as the driver takes them. Dates and times go
// as the text SQLite stores them (it has no date type): YYYY-MM-DD and RFC 3339.
func args(s pipeline.Statement) []any {
	out := make([]any, len(s.Args))
	for i, a := range s.Args {
		switch v := a.(type) {
		case pipeline.Date:
			out[i] = v.String()
		case time.Time:
			out[i] = v.Format(time.RFC3339Nano)
		default:
			out[i] = a
		}
	}
	return out
}

func (s *source) Next(ctx context.Context) (*execute.Page, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if s.done && s.ahead == nil {
		return nil, io.EOF
	}
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()

	var (
		rows    = make([][]any, 0, min(s.batch, 1024))
		cursors []any
		bytes   int64
	)
	take := func(vals []any) {
		if s.cursor != "" {
			cursors = append(cursors, vals[s.width-1])
			vals = vals[: s.width-1 : s.width-1]
		}
		bytes += pager.Size(vals)
		rows = append(rows, vals)
	}
	if s.ahead != nil {
		take(s.ahead)
		s.ahead = nil
	}
	for len(rows) < s.batch && !s.done {
		vals, err := s.scan()
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		if vals == nil {
			s.done = true
			break
		}
		take(vals)
	}
	var next any
	hasNext := false
	for s.cursor != "" && !s.done {
		vals, err := s.scan()
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		if vals == nil {
			s.done = true
			break
		}
		v := vals[s.width-1]
		if last := cursors[len(cursors)-1]; s.exact && v != nil && last != nil && cursor.Compare(v, last) == 0 {
			take(vals) // an exact page grows until the cursor value changes
			continue
		}
		s.ahead, next, hasNext = vals, v, true
		break
	}
	if len(rows) == 0 {
		return nil, io.EOF
	}
	p := &execute.Page{Columns: s.cols, Rows: rows, Bytes: bytes}
	if s.cursor != "" {
		if v, ok := cursor.EdgeBookmark(cursors, next, hasNext); ok {
			p.Bookmark = &state.Bookmark{Cursor: s.cursor, Value: cursor.BookmarkValue(v)}
		}
	}
	return p, nil
}

// scan reads the next row; nil, nil at the end.
func (s *source) scan() ([]any, error) {
	if !s.rows.Next() {
		if err := s.rows.Err(); err != nil {
			return nil, fmt.Errorf("sqlite: read rows: %w", err)
		}
		return nil, nil
	}
	if len(s.slab) < s.width {
		s.slab = make([]any, max(s.width, 4096))
	}
	vals := s.slab[:s.width:s.width]
	s.slab = s.slab[s.width:]
	for i := range vals {
		s.ptrs[i] = &vals[i]
	}
	if err := s.rows.Scan(s.ptrs...); err != nil {
		return nil, fmt.Errorf("sqlite: read row: %w", err)
	}
	return vals, nil
}

func (s *source) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("sqlite: %w", ctx.Err())
	}
	return err
}

func (s *source) Close() error {
	s.cancel()
	err := s.rows.Close()
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("sqlite: close: %w", err)
	}
	return nil
}
