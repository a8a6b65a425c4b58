package pager

import (
	"io"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cursor"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

// Reader returns the next row, or nil, nil after the last one. A returned row belongs to
// the pager.
type Reader func() ([]any, error)

// Options shape the pages.
type Options struct {
	// Columns name the values of a page row, in order.
	Columns []string
	// Batch is the number of rows per page.
	Batch int
	// Cursor is the cursor column's name; "" for a read that is not incremental.
	Cursor string
	// CursorAt is the index of the cursor value in a row read. When it is not below
	// len(Columns) the value is an extra trailing one that is not part of the page.
	CursorAt int
	// Exact keeps rows sharing a cursor value on one page (execute.Incremental.Exact):
	// a page grows past Batch until the value changes, so its bookmark is its last value.
	Exact bool
}

// Pager yields the pages of a Reader. It reads one row ahead on incremental reads, to see
// whether the row after a page shares the page's last cursor value.
type Pager struct {
	read  Reader
	o     Options
	ahead []any
	done  bool
}

// New returns a pager over read.
func New(read Reader, o Options) *Pager {
	if o.Batch < 1 {
		o.Batch = 1
	}
	return &Pager{read: read, o: o}
}

// Next returns the next page, or io.EOF after the last one. An error of the Reader is
// returned as is; the pager must not be used after it.
func (pg *Pager) Next() (*execute.Page, error) {
	if pg.done && pg.ahead == nil {
		return nil, io.EOF
	}
	incremental := pg.o.Cursor != ""
	width := len(pg.o.Columns)
	var (
		rows    = make([][]any, 0, min(pg.o.Batch, 1024))
		cursors []any
		bytes   int64
	)
	take := func(vals []any) {
		if incremental {
			cursors = append(cursors, vals[pg.o.CursorAt])
			if len(vals) > width {
				vals = vals[:width:width]
			}
		}
		bytes += Size(vals)
		rows = append(rows, vals)
	}
	if pg.ahead != nil {
		take(pg.ahead)
		pg.ahead = nil
	}
	for len(rows) < pg.o.Batch && !pg.done {
		vals, err := pg.read()
		if err != nil {
			return nil, err
		}
		if vals == nil {
			pg.done = true
			break
		}
		take(vals)
	}
	var next any
	hasNext := false
	for incremental && !pg.done {
		vals, err := pg.read()
		if err != nil {
			return nil, err
		}
		if vals == nil {
			pg.done = true
			break
		}
		v := vals[pg.o.CursorAt]
		if pg.o.Exact && tied(v, cursors[len(cursors)-1]) {
			take(vals)
			continue
		}
		pg.ahead, next, hasNext = vals, v, true
		break
	}
	if len(rows) == 0 {
		return nil, io.EOF
	}
	p := &execute.Page{Columns: pg.o.Columns, Rows: rows, Bytes: bytes}
	if incremental {
		if v, ok := cursor.EdgeBookmark(cursors, next, hasNext); ok {
			p.Bookmark = &state.Bookmark{Cursor: pg.o.Cursor, Value: cursor.BookmarkValue(v)}
		}
	}
	return p, nil
}

func tied(a, b any) bool {
	return a != nil && b != nil && cursor.Compare(a, b) == 0
}

// Size approximates the bytes of a row's values, for Page.Bytes.
func Size(vals []any) int64 {
	var n int64
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			n += int64(len(x))
		case []byte:
			n += int64(len(x))
		case time.Time:
			n += 24
		case nil:
			n++
		default:
			n += 8
		}
	}
	return n
}
