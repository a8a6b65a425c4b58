package format

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
)

// Prefetcher is an io.ReaderAt over a remote object that can fetch a byte range ahead
// of the reads inside it (one request instead of one per page). The Parquet reader asks
// for each row group's column chunks before decoding them, which bounds memory to one
// row group; reads outside the range still work, one request each.
type Prefetcher interface {
	io.ReaderAt
	Prefetch(off, n int64) error
}

// parquetReader yields the rows of one Parquet object, one row group at a time.
type parquetReader struct {
	file    *parquet.File
	ra      io.ReaderAt
	closer  io.Closer
	name    string
	columns []string
	fields  []parquetField
	nested  bool

	group   int // next row group to open
	rows    parquet.Rows
	buf     []parquet.Row
	n, at   int   // rows in buf, next row in buf
	rowSize int64 // average uncompressed bytes per row of the current group
	slab    []any // row values are carved from slabs: one allocation per many rows
}

// parquetField is one top-level column: a plain leaf (leaf ≥ 0, conv) or a nested group
// or repeated field (leaf < 0), rendered as JSON.
type parquetField struct {
	name string
	leaf int
	conv convert
}

const parquetBatch = 1024

// NewParquetReader opens the Parquet object of size bytes read through ra (closing
// closer, which may be nil, at Close); name is the object's name in errors.
func NewParquetReader(ra io.ReaderAt, size int64, closer io.Closer, name string) (Reader, error) {
	f, err := parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", name, err)
	}
	r := &parquetReader{file: f, ra: ra, closer: closer, name: name}
	leaf := 0
	for _, fld := range f.Schema().Fields() {
		pf := parquetField{name: fld.Name(), leaf: -1}
		if fld.Leaf() && !fld.Repeated() {
			pf.leaf, pf.conv = leaf, converterOf(fld.Type())
		} else {
			r.nested = true
		}
		leaf += leafCount(fld)
		r.fields = append(r.fields, pf)
		r.columns = append(r.columns, pf.name)
	}
	return r, nil
}

func leafCount(n parquet.Node) int {
	if n.Leaf() {
		return 1
	}
	c := 0
	for _, f := range n.Fields() {
		c += leafCount(f)
	}
	return c
}

func (*parquetReader) fixedColumns() {}

func (r *parquetReader) Read() ([]string, []any, int64, error) {
	for r.at >= r.n {
		if err := r.fill(); err != nil {
			return nil, nil, 0, err
		}
	}
	row := r.buf[r.at]
	r.at++
	vals, err := r.decode(row)
	if err != nil {
		return nil, nil, 0, err
	}
	return r.columns, vals, r.rowSize, nil
}

// fill reads the next rows of the current row group, moving to the next group at its end.
func (r *parquetReader) fill() error {
	if r.rows == nil {
		groups := r.file.RowGroups()
		if r.group >= len(groups) {
			return io.EOF
		}
		if err := r.prefetch(r.group); err != nil {
			return fmt.Errorf("%s row group %d: %w", r.name, r.group+1, err)
		}
		g := groups[r.group]
		if n := g.NumRows(); n > 0 {
			r.rowSize = max(r.file.Metadata().RowGroups[r.group].TotalByteSize/n, 1)
		}
		r.rows = g.Rows()
		r.group++
		if r.buf == nil {
			r.buf = make([]parquet.Row, parquetBatch)
		}
	}
	n, err := r.rows.ReadRows(r.buf)
	r.n, r.at = n, 0
	if errors.Is(err, io.EOF) {
		err = r.rows.Close()
		r.rows = nil
		if err != nil {
			return fmt.Errorf("%s row group %d: %w", r.name, r.group, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s row group %d: %w", r.name, r.group, err)
	}
	return nil
}

// prefetch asks a Prefetcher for row group i's column chunks in one range.
func (r *parquetReader) prefetch(i int) error {
	p, ok := r.ra.(Prefetcher)
	if !ok {
		return nil
	}
	var lo, hi int64 = -1, 0
	for _, c := range r.file.Metadata().RowGroups[i].Columns {
		m := c.MetaData
		start := m.DataPageOffset
		if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
			start = m.DictionaryPageOffset
		}
		if lo < 0 || start < lo {
			lo = start
		}
		hi = max(hi, start+m.TotalCompressedSize)
	}
	if lo < 0 || hi <= lo {
		return nil
	}
	return p.Prefetch(lo, hi-lo)
}

// decode maps one row onto the top-level columns.
func (r *parquetReader) decode(row parquet.Row) ([]any, error) {
	n := len(r.fields)
	if len(r.slab) < n {
		r.slab = make([]any, max(n, 4096))
	}
	vals := r.slab[:n:n]
	r.slab = r.slab[n:]
	var nested map[string]any
	if r.nested {
		nested = map[string]any{}
		if err := r.file.Schema().Reconstruct(&nested, row); err != nil {
			return nil, fmt.Errorf("%s row group %d: %w", r.name, r.group, err)
		}
	}
	for i, f := range r.fields {
		if f.leaf < 0 {
			v := nested[f.name]
			if v == nil {
				continue
			}
			b, err := jsonenc.AppendValue(nil, jsonable(v))
			if err != nil {
				return nil, fmt.Errorf("%s row group %d: column %q: %w", r.name, r.group, f.name, err)
			}
			vals[i] = string(b)
			continue
		}
		if f.leaf >= len(row) {
			continue
		}
		v := row[f.leaf]
		if v.Column() != f.leaf {
			v = valueOf(row, f.leaf)
		}
		if !v.IsNull() {
			vals[i] = f.conv(v)
		}
	}
	return vals, nil
}

// valueOf finds the leaf column's value in a row whose nested columns carry several.
func valueOf(row parquet.Row, col int) parquet.Value {
	for _, v := range row {
		if v.Column() == col {
			return v
		}
	}
	return parquet.Value{}
}

// jsonable makes what Reconstruct built encodable: byte slices of text become strings.
func jsonable(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
	}
	return v
}

func (r *parquetReader) Close() error {
	var err error
	if r.rows != nil {
		err = r.rows.Close()
		r.rows = nil
	}
	if r.closer != nil {
		err = errors.Join(err, r.closer.Close())
	}
	return err
}
