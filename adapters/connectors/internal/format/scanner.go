package format

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cursor"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

// Reader yields the rows of one object.
type Reader interface {
	// Read returns the next row — its keys (which may be reused between calls), fresh
	// values and its approximate size in bytes — or io.EOF after the last.
	Read() (keys []string, vals []any, size int64, err error)
	// Close releases the object.
	Close() error
}

// fixedColumns is implemented by readers whose every row has the same columns (CSV,
// Parquet): a cursor column missing from them is an error, not a row without a cursor.
type fixedColumns interface {
	fixedColumns()
}

// Object is one input of a Scanner, opened only when the scan reaches it.
type Object struct {
	Name string
	Open func() (Reader, error)
}

// Scanner reads objects one after another as pages. Without Incremental it is a plain
// read; with it, rows at or before the bookmark are skipped and — objects not being
// sorted by the cursor — only the last page carries a bookmark (the greatest cursor
// value read), so an interrupted read resumes from the previous bookmark and nothing is
// skipped.
type Scanner struct {
	connector string
	objects   []Object
	next      int
	batch     int

	cur      Reader
	curName  string
	curKeys  []string // keys the cursor index was found in
	curCol   int
	curFixed bool

	incremental bool
	cursorCol   string
	after       any
	hasAfter    bool
	max         any

	ahead *row
	done  bool

	lines bool // UseLines: pages of JSON lines (scanner_lines.go)
	hint  int  // bytes of the last page of lines
}

type row struct {
	keys []string
	vals []any
	size int64
}

// NewScanner scans objects in the order given, in pages of batch rows; connector
// prefixes every error.
func NewScanner(connector string, objects []Object, batch int, inc *execute.Incremental) (*Scanner, error) {
	s := &Scanner{connector: connector, objects: objects, batch: max(batch, 1)}
	if inc != nil {
		if inc.Cursor == "" {
			return nil, fmt.Errorf("%s: incremental replication needs a cursor column", connector)
		}
		s.incremental, s.cursorCol = true, inc.Cursor
		if inc.After != nil && inc.After.Value != nil {
			s.after, s.hasAfter = inc.After.Value, true
			s.max = inc.After.Value
		}
	}
	return s, nil
}

// Next returns the next page, or io.EOF after the last.
func (s *Scanner) Next(ctx context.Context) (*execute.Page, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", s.connector, err)
	}
	if s.done && s.ahead == nil {
		return nil, io.EOF
	}
	if s.lines {
		return s.nextLines(ctx)
	}
	b := pageBuilder{}
	if s.ahead != nil {
		b.add(s.ahead.keys, s.ahead.vals, s.ahead.size)
		s.ahead = nil
	}
	for len(b.rows) < s.batch && !s.done {
		if len(b.rows)%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("%s: %w", s.connector, err)
			}
		}
		r, err := s.pull()
		if errors.Is(err, io.EOF) {
			s.done = true
			break
		}
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		b.add(r.keys, r.vals, r.size)
	}
	if s.incremental && !s.done {
		// Look one row ahead: only the last page may carry the bookmark.
		r, err := s.pull()
		switch {
		case errors.Is(err, io.EOF):
			s.done = true
		case err != nil:
			return nil, s.fail(ctx, err)
		default:
			s.ahead = &r
		}
	}
	if len(b.rows) == 0 {
		return nil, io.EOF
	}
	p := b.page()
	if s.incremental && s.done && s.ahead == nil && s.max != nil {
		p.Bookmark = &state.Bookmark{Cursor: s.cursorCol, Value: cursor.BookmarkValue(s.max)}
	}
	return p, nil
}

// fail prefers the caller's cancellation over the read error it caused.
func (s *Scanner) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", s.connector, ctx.Err())
	}
	return fmt.Errorf("%s: %w", s.connector, err)
}

// pull returns the next row to emit across all objects, applying the incremental filter.
func (s *Scanner) pull() (row, error) {
	for {
		if err := s.openNext(); err != nil {
			return row{}, err
		}
		keys, vals, size, err := s.cur.Read()
		if errors.Is(err, io.EOF) {
			if err := s.closeCur(); err != nil {
				return row{}, err
			}
			continue
		}
		if err != nil {
			return row{}, err
		}
		if s.incremental {
			v, err := s.cursorValue(keys, vals)
			if err != nil {
				return row{}, err
			}
			if s.hasAfter && (v == nil || cursor.Compare(v, s.after) <= 0) {
				continue
			}
			if v != nil && (s.max == nil || cursor.Compare(v, s.max) > 0) {
				s.max = v
			}
		}
		return row{keys: keys, vals: vals, size: size}, nil
	}
}

// openNext opens the next object when none is open; io.EOF after the last.
func (s *Scanner) openNext() error {
	if s.cur != nil {
		return nil
	}
	if s.next >= len(s.objects) {
		return io.EOF
	}
	obj := s.objects[s.next]
	s.next++
	r, err := obj.Open()
	if err != nil {
		return err
	}
	_, fixed := r.(fixedColumns)
	s.cur, s.curName, s.curKeys, s.curFixed = r, obj.Name, nil, fixed
	return nil
}

// closeCur closes the object read to its end.
func (s *Scanner) closeCur() error {
	err := s.cur.Close()
	s.cur = nil
	if err != nil {
		return fmt.Errorf("%s: %w", s.curName, err)
	}
	return nil
}

func (s *Scanner) cursorValue(keys []string, vals []any) (any, error) {
	if !s.curFixed {
		// JSONL keys differ from row to row (and their slice is reused): look each up.
		if i := slices.Index(keys, s.cursorCol); i >= 0 {
			return vals[i], nil
		}
		return nil, nil
	}
	if s.curKeys == nil {
		s.curKeys, s.curCol = keys, slices.Index(keys, s.cursorCol)
		if s.curCol < 0 {
			// The header is not quoted: an object that is not the format it was taken
			// for would publish its first line through the run's error.
			return nil, fmt.Errorf("%s: cursor column %q is not one of the %d columns of the header", s.curName, s.cursorCol, len(keys))
		}
	}
	return vals[s.curCol], nil
}

// Close closes the object being read, if any.
func (s *Scanner) Close() error {
	if s.cur != nil {
		err := s.cur.Close()
		s.cur = nil
		return err
	}
	return nil
}
