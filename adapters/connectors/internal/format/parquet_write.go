package format

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
	"github.com/sluicehq/sluice/application/execute"
)

// colKind is a Parquet output column's type, inferred from the first page.
type colKind uint8

const (
	kindString colKind = iota
	kindInt
	kindDouble
	kindBool
	kindTime
	kindBytes
	kindJSON
)

// parquetWriter writes pages as Parquet. The schema is fixed by the first page, as a SQL
// sink's create_table fixes its table: each column's first non-null value names its type
// (a column that is null throughout is a string), every column is optional, and later
// pages must use those columns (in any order, any subset).
type parquetWriter struct {
	out     io.Writer
	opts    Options
	w       *parquet.Writer
	cols    []string
	kinds   []colKind
	index   map[string]int
	rows    []parquet.Row
	scratch []byte
}

func newParquetWriter(out io.Writer, o Options) (*parquetWriter, error) {
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = RowGroupRowsDefault
	}
	return &parquetWriter{out: out, opts: o}, nil
}

func codecOf(name string) compress.Codec {
	switch name {
	case Snappy:
		return &snappy.Codec{}
	case None:
		return &uncompressed.Codec{}
	}
	return &zstd.Codec{Level: zstd.SpeedDefault, Concurrency: 1}
}

func (p *parquetWriter) open(page *execute.Page) {
	p.cols = slices.Clone(page.Columns)
	p.kinds = make([]colKind, len(p.cols))
	p.index = make(map[string]int, len(p.cols))
	fields := make([]parquet.Field, 0, len(p.cols))
	group := parquet.Group{}
	for i, c := range p.cols {
		p.index[c] = i
		p.kinds[i] = kindString
		for _, r := range page.Rows {
			if k, ok := kindOf(r[i]); ok {
				p.kinds[i] = k
				break
			}
		}
		group[c] = parquet.Optional(nodeOf(p.kinds[i]))
	}
	// parquet.Group orders its fields by name; the file keeps the page's order.
	byName := map[string]parquet.Field{}
	for _, f := range group.Fields() {
		byName[f.Name()] = f
	}
	for _, c := range p.cols {
		fields = append(fields, byName[c])
	}
	schema := parquet.NewSchema("sluice", orderedGroup{Group: group, fields: fields})
	p.w = parquet.NewWriter(p.out, schema,
		parquet.Compression(codecOf(p.opts.Compression)),
		parquet.MaxRowsPerRowGroup(int64(p.opts.RowGroupRows)),
		parquet.CreatedBy("sluice", "", ""))
}

// orderedGroup is a group whose fields keep the order they are given.
type orderedGroup struct {
	parquet.Group
	fields []parquet.Field
}

func (g orderedGroup) Fields() []parquet.Field { return g.fields }

func kindOf(v any) (colKind, bool) {
	switch v.(type) {
	case nil:
		return 0, false
	case int64, int, int32, int16, int8, uint32, uint16, uint8:
		return kindInt, true
	case float64, float32:
		return kindDouble, true
	case bool:
		return kindBool, true
	case time.Time:
		return kindTime, true
	case []byte:
		return kindBytes, true
	case map[string]any, []any, []string:
		return kindJSON, true
	}
	return kindString, true
}

func nodeOf(k colKind) parquet.Node {
	switch k {
	case kindInt:
		return parquet.Int(64)
	case kindDouble:
		return parquet.Leaf(parquet.DoubleType)
	case kindBool:
		return parquet.Leaf(parquet.BooleanType)
	case kindTime:
		return parquet.Timestamp(parquet.Nanosecond)
	case kindBytes:
		return parquet.Leaf(parquet.ByteArrayType)
	case kindJSON:
		return parquet.JSON()
	}
	return parquet.String()
}

func (p *parquetWriter) Write(page *execute.Page) error {
	if len(page.Rows) == 0 {
		return nil
	}
	if p.w == nil {
		p.open(page)
	}
	pos := make([]int, len(page.Columns))
	for i, c := range page.Columns {
		j, ok := p.index[c]
		if !ok {
			return fmt.Errorf("column %q is not in the Parquet schema %v, which the first page fixed; every page must use the columns of the first", c, p.cols)
		}
		pos[i] = j
	}
	if cap(p.rows) < len(page.Rows) {
		p.rows = make([]parquet.Row, len(page.Rows))
	}
	rows := p.rows[:len(page.Rows)]
	present := make([]bool, len(p.cols))
	for r, src := range page.Rows {
		row := rows[r][:0]
		clear(present)
		for i, v := range src {
			j := pos[i]
			pv, err := p.value(p.kinds[j], v)
			if err != nil {
				return fmt.Errorf("row %d of the page, column %q: %w", r+1, page.Columns[i], err)
			}
			row = append(row, pv.Level(0, def(pv), j))
			present[j] = true
		}
		for j, ok := range present {
			if !ok {
				row = append(row, parquet.Value{}.Level(0, 0, j))
			}
		}
		if len(src) != len(p.cols) || !slices.IsSorted(pos) {
			slices.SortFunc(row, func(a, b parquet.Value) int { return a.Column() - b.Column() })
		}
		rows[r] = row
	}
	if _, err := p.w.WriteRows(rows); err != nil {
		return err
	}
	return nil
}

func def(v parquet.Value) int {
	if v.IsNull() {
		return 0
	}
	return 1
}

// value converts v for a column of kind k; values of another type are converted when
// nothing is lost (an int into a double column, anything into a string column).
func (p *parquetWriter) value(k colKind, v any) (parquet.Value, error) {
	if v == nil {
		return parquet.Value{}, nil
	}
	switch k {
	case kindInt:
		if n, ok := jsonenc.Integer(v); ok {
			return parquet.Int64Value(n), nil
		}
	case kindDouble:
		switch x := v.(type) {
		case float64:
			return parquet.DoubleValue(x), nil
		case float32:
			return parquet.DoubleValue(float64(x)), nil
		}
		if n, ok := jsonenc.Integer(v); ok && math.Abs(float64(n)) < 1<<53 {
			return parquet.DoubleValue(float64(n)), nil
		}
	case kindBool:
		if b, ok := v.(bool); ok {
			return parquet.BooleanValue(b), nil
		}
	case kindTime:
		if t, ok := v.(time.Time); ok {
			return parquet.Int64Value(t.UnixNano()), nil
		}
	case kindBytes:
		switch x := v.(type) {
		case []byte:
			return parquet.ByteArrayValue(x), nil
		case string:
			return parquet.ByteArrayValue(stringBytes(x)), nil
		}
	case kindJSON:
		b, err := jsonenc.AppendValue(nil, v)
		if err != nil {
			return parquet.Value{}, err
		}
		return parquet.ByteArrayValue(b), nil
	default:
		s, err := text(v, &p.scratch)
		if err != nil {
			return parquet.Value{}, err
		}
		return parquet.ByteArrayValue(stringBytes(s)), nil
	}
	return parquet.Value{}, fmt.Errorf("a %T value does not fit the column's Parquet type, which the first page fixed", v)
}

// stringBytes views s as bytes without copying: the column buffers copy every value
// they are given before WriteRows returns, and nothing writes through the view.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// Close writes the last row group and the footer. A writer that saw no rows writes a
// file with no columns, so that an empty run still leaves a valid Parquet file.
func (p *parquetWriter) Close() error {
	if p.w == nil {
		p.w = parquet.NewWriter(p.out, parquet.NewSchema("sluice", parquet.Group{}),
			parquet.CreatedBy("sluice", "", ""))
	}
	return p.w.Close()
}
