package postgres

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// plan says how the rows of pages with one set of columns land in the table: which table
// columns the COPY data fills, in order, and where each value comes from.
type plan struct {
	from    []string // the page columns the plan was made for
	targets []string // table columns, in COPY order
	kinds   []kind
	src     []int    // page column of each target; -1 for the jsonb column (the whole row)
	keys    []string // table names of the key columns
	row     *jsonenc.RowEncoder
	bins    []binWriter // each target's COPY BINARY writer; nil when some target has none
}

// planFor maps page columns onto the table (which must exist). Columns the table lacks
// are one error naming them all.
func (s *sink) planFor(cols []string) (*plan, error) {
	if s.plan != nil && slices.Equal(s.plan.from, cols) {
		return s.plan, nil
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("page has rows but no columns")
	}
	o := s.opts
	pl := &plan{from: slices.Clone(cols)}
	if o.mode == pipeline.Upsert || o.mode == pipeline.Delete || o.jsonb {
		for _, k := range o.key {
			if !slices.Contains(cols, k) {
				return nil, fmt.Errorf("key column %q is not among the page's columns [%s]", k, strings.Join(cols, ", "))
			}
		}
	}
	var missing []string
	add := func(page int, name string) {
		i, ok := s.table.lookup(name)
		if !ok {
			missing = append(missing, fmt.Sprintf("%q", name))
			return
		}
		pl.targets = append(pl.targets, s.table.cols[i].name)
		pl.kinds = append(pl.kinds, s.table.cols[i].kind)
		pl.src = append(pl.src, page)
	}
	if o.jsonb {
		for _, k := range o.key {
			add(slices.Index(cols, k), k)
		}
		add(-1, o.jsonCol)
		pl.row = jsonenc.NewRowEncoder(pl.from)
	} else {
		for j, c := range cols {
			add(j, c)
		}
	}
	if len(missing) > 0 {
		what := "columns"
		if len(missing) == 1 {
			what = "column"
		}
		return nil, fmt.Errorf("the table has no %s %s; add them to the table or leave them out of the source",
			what, strings.Join(missing, ", "))
	}
	for _, k := range o.key {
		i, _ := s.table.lookup(k)
		pl.keys = append(pl.keys, s.table.cols[i].name)
	}
	if !o.jsonb {
		for _, name := range pl.targets {
			i, _ := s.table.lookup(name)
			w := binWriterOf(s.table.cols[i].oid)
			if w == nil {
				pl.bins = nil
				break
			}
			pl.bins = append(pl.bins, w)
		}
	}
	s.plan = pl
	return pl, nil
}

// encodeAny renders a decoded page as COPY BINARY tuples when the plan and every value
// allow it (binary true), else as COPY text rows; both in the plan's column order.
func (s *sink) encodeAny(p *execute.Page, pl *plan) (data []byte, binary bool, err error) {
	if pl.bins != nil && !s.textOnly {
		if data, ok := s.encodeBinary(p.Rows, len(p.Columns), pl); ok {
			return data, true, nil
		}
	}
	data, err = s.encode(p, pl)
	return data, false, err
}

// encode renders a decoded page as COPY text rows in the plan's column order.
func (s *sink) encode(p *execute.Page, pl *plan) ([]byte, error) {
	buf := s.buf[:0]
	for _, r := range p.Rows {
		if len(r) != len(p.Columns) {
			return nil, fmt.Errorf("row has %d values for %d columns", len(r), len(p.Columns))
		}
		for i, j := range pl.src {
			if i > 0 {
				buf = append(buf, '\t')
			}
			var err error
			if j < 0 {
				js, err := pl.row.AppendRow(s.js[:0], r)
				if err != nil {
					return nil, err
				}
				s.js = js
				buf = copyEscape(buf, string(js[:len(js)-1]))
				continue
			}
			if buf, err = appendCopy(buf, pl.kinds[i], r[j]); err != nil {
				return nil, fmt.Errorf("column %q: %w", p.Columns[j], err)
			}
		}
		buf = append(buf, '\n')
	}
	s.buf = buf
	return buf, nil
}

// createColumns lists the columns and types of a table created for the first page.
func (s *sink) createColumns(p *execute.Page) (cols, types []string, err error) {
	if p.Encoded != nil {
		if s.opts.jsonb || s.enc == nil {
			return nil, nil, fmt.Errorf("cannot create the table from encoded rows")
		}
		return s.enc.Columns, s.enc.Types, nil
	}
	idx := make([]int, 0, len(p.Columns))
	if s.opts.jsonb {
		for _, k := range s.opts.key {
			j := slices.Index(p.Columns, k)
			if j < 0 {
				return nil, nil, fmt.Errorf("key column %q is not among the page's columns [%s], so the table cannot be created with it",
					k, strings.Join(p.Columns, ", "))
			}
			idx = append(idx, j)
			cols = append(cols, k)
		}
		types = append(pageTypes(p, idx), "jsonb")
		return append(cols, s.opts.jsonCol), types, nil
	}
	for _, k := range s.opts.key {
		if !slices.Contains(p.Columns, k) {
			return nil, nil, fmt.Errorf("key column %q is not among the page's columns [%s], so the table cannot be created with it",
				k, strings.Join(p.Columns, ", "))
		}
	}
	for j := range p.Columns {
		idx = append(idx, j)
	}
	return p.Columns, pageTypes(p, idx), nil
}
