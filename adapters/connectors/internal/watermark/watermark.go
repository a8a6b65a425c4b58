// Package watermark stores an exactly-once position (execute.Position) in the columns of a
// SQL sink's watermark row, the same way for every database: the bookmark as a state
// envelope (SPEC §4.10 format 2) in a text column, NULL when there is none, and the rows
// delivered past it in an integer column.
package watermark

import (
	"fmt"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

// DefaultTable is the watermark table's name when the sink config names none.
const DefaultTable = "sluice_watermarks"

// Encode returns the column values of p: the bookmark text (nil for none) and the rows.
func Encode(p execute.Position) (bookmark *string, rows int64, err error) {
	if p.Bookmark == nil {
		return nil, p.Rows, nil
	}
	b, err := state.Encode(*p.Bookmark, state.FormatEnvelope)
	if err != nil {
		return nil, 0, fmt.Errorf("encode bookmark: %w", err)
	}
	s := string(b)
	return &s, p.Rows, nil
}

// Decode is the inverse of Encode.
func Decode(bookmark *string, rows int64) (execute.Position, error) {
	p := execute.Position{Rows: rows}
	if bookmark == nil {
		return p, nil
	}
	b, err := state.Decode([]byte(*bookmark), "")
	if err != nil {
		return p, fmt.Errorf("watermark bookmark: %w", err)
	}
	p.Bookmark = &b
	return p, nil
}
