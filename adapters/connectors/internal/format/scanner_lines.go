package format

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonlines"
	"github.com/sluicehq/sluice/application/execute"
)

// lineReader is a Reader that can hand its objects over as JSON lines (JSONL).
type lineReader interface {
	AppendLine(dst []byte) ([]byte, int64, error)
}

// UseLines switches a plain scan of JSONL objects to pages of JSON lines
// (jsonlines.Format): each object is checked, and passed on as written when it fits a
// line. An incremental scan needs decoded rows for its cursor.
func (s *Scanner) UseLines() error {
	if s.incremental {
		return fmt.Errorf("%s: an incremental read cannot pass JSON lines through", s.connector)
	}
	s.lines = true
	return nil
}

// nextLines reads up to a batch of objects into a fresh buffer: the sink owns a page's
// bytes once it has it.
func (s *Scanner) nextLines(ctx context.Context) (*execute.Page, error) {
	data := make([]byte, 0, s.hint+s.hint/8)
	var rows int
	var size int64
	for rows < s.batch && !s.done {
		if rows%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("%s: %w", s.connector, err)
			}
		}
		var n int64
		var err error
		data, n, err = s.pullLine(data)
		if errors.Is(err, io.EOF) {
			s.done = true
			break
		}
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		rows++
		size += n
	}
	if rows == 0 {
		return nil, io.EOF
	}
	s.hint = len(data)
	return &execute.Page{Encoded: &execute.Encoded{Format: jsonlines.Format, Data: data, Rows: rows}, Bytes: size}, nil
}

// pullLine appends the next object across all objects as a line.
func (s *Scanner) pullLine(dst []byte) ([]byte, int64, error) {
	for {
		if err := s.openNext(); err != nil {
			return dst, 0, err
		}
		lr, ok := s.cur.(lineReader)
		if !ok {
			return dst, 0, fmt.Errorf("%s: not JSONL; JSON lines come only from JSONL", s.curName)
		}
		out, n, err := lr.AppendLine(dst)
		if errors.Is(err, io.EOF) {
			if err := s.closeCur(); err != nil {
				return dst, 0, err
			}
			continue
		}
		return out, n, err
	}
}
