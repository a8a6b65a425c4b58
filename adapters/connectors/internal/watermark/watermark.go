// Package watermark stores an exactly-once position (execute.Position) in the columns of a
// SQL sink's watermark row, the same way for every database: the bookmark as a state
// envelope (SPEC §4.10 format 2) in a text column, NULL when there is none, the rows
// delivered past it in an integer column, and the run that completed the read in a text
// column, NULL while a read is in progress.
package watermark

import (
	"fmt"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

// DefaultTable is the watermark table's name when the sink config names none.
const DefaultTable = "sluice_watermarks"

// CompletedBy is the column added after the first release. Tables created before it
// lack it: a sink that finds it missing adds it (NULL for every existing row, which
// reads as "no run completed here", what those rows meant) and tries again.
const CompletedBy = "completed_by"

// Row is a position as the watermark's columns hold it.
type Row struct {
	Bookmark    *string
	Rows        int64
	CompletedBy *string
}

// Encode returns the column values of p.
func Encode(p execute.Position) (Row, error) {
	r := Row{Rows: p.Rows}
	if p.CompletedBy != "" {
		r.CompletedBy = &p.CompletedBy
	}
	if p.Bookmark == nil {
		return r, nil
	}
	b, err := state.Encode(*p.Bookmark, state.FormatEnvelope)
	if err != nil {
		return Row{}, fmt.Errorf("encode bookmark: %w", err)
	}
	s := string(b)
	r.Bookmark = &s
	return r, nil
}

// Decode is the inverse of Encode.
func Decode(r Row) (execute.Position, error) {
	p := execute.Position{Rows: r.Rows}
	if r.CompletedBy != nil {
		p.CompletedBy = *r.CompletedBy
	}
	if r.Bookmark == nil {
		return p, nil
	}
	b, err := state.Decode([]byte(*r.Bookmark), "")
	if err != nil {
		return p, fmt.Errorf("watermark bookmark: %w", err)
	}
	p.Bookmark = &b
	return p, nil
}
