package records

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/sluicehq/sluice/adapters/connectors/internal/pager"
	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/application/execute"
)

// Object is one decoded JSON object.
type Object = map[string]any

// Decode parses b as one JSON value with numbers typed as Normalize types them.
func Decode(b []byte) (any, error) {
	if o, ok := parseObject(b); ok {
		return o, nil
	}
	return decodeSlow(b)
}

func decodeSlow(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return Normalize(v), nil
}

// DecodeObject parses b as one JSON object.
func DecodeObject(b []byte) (Object, error) {
	v, err := Decode(b)
	if err != nil {
		return nil, err
	}
	o, ok := v.(Object)
	if !ok {
		return nil, fmt.Errorf("is a JSON %s, not an object", Kind(v))
	}
	return o, nil
}

// Normalize replaces json.Number values (at any depth) by int64 or float64, as the SQL
// sources type their JSON columns.
func Normalize(v any) any { return sqlspec.JSONNumbers(v) }

// Kind names the JSON type of a decoded value, for error messages that must not quote
// the value itself (SPEC §14.1: row data never appears in a run's error).
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, float64, json.Number:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// Builder collects objects into one page. The zero value is ready; it is not safe for
// concurrent use.
type Builder struct {
	cols  []string
	index map[string]int
	rows  [][]any // a row may be shorter than cols: columns added after it are nil there
	bytes int64
}

// column returns the index of key, adding the column when it is new.
func (b *Builder) column(key []byte) int {
	if i, ok := b.index[string(key)]; ok {
		return i
	}
	if b.index == nil {
		b.index = map[string]int{}
	}
	k := string(key)
	b.index[k] = len(b.cols)
	b.cols = append(b.cols, k)
	return len(b.cols) - 1
}

// set puts v under key in row, growing the row to the columns known so far.
func (b *Builder) set(row []any, key []byte, v any) []any {
	i := b.column(key)
	if i >= len(row) {
		row = append(row, make([]any, len(b.cols)-len(row))...)
	}
	row[i] = v
	return row
}

// Add appends one decoded object. Its new keys become columns in sorted order (map order
// is random; sorting keeps a page's columns the same on every read of the same data).
func (b *Builder) Add(o Object) {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	row := make([]any, 0, len(b.cols))
	for _, k := range keys {
		row = b.set(row, []byte(k), o[k])
	}
	b.push(row)
}

// AddJSON decodes one JSON object straight into the page, its new keys becoming columns
// in the order they come; anything but an object is an error naming what it is.
func (b *Builder) AddJSON(data []byte) error {
	row := make([]any, 0, len(b.cols))
	cols := len(b.cols)
	if eachField(data, func(key []byte, v any) { row = b.set(row, key, v) }) {
		b.push(row)
		return nil
	}
	// Not an object, or malformed: undo the columns it added, and let encoding/json word
	// the error (or decode what the fast path does not take).
	for _, c := range b.cols[cols:] {
		delete(b.index, c)
	}
	b.cols = b.cols[:cols]
	o, err := DecodeObject(data)
	if err != nil {
		return err
	}
	b.Add(o)
	return nil
}

func (b *Builder) push(row []any) {
	b.rows = append(b.rows, row)
	b.bytes += pager.Size(row)
}

// Len is the number of objects added since the last Page.
func (b *Builder) Len() int { return len(b.rows) }

// Page returns the objects added so far as a page (nil when there are none) and resets
// the builder.
func (b *Builder) Page() *execute.Page {
	if len(b.rows) == 0 {
		return nil
	}
	for i, row := range b.rows {
		if len(row) < len(b.cols) {
			b.rows[i] = append(row, make([]any, len(b.cols)-len(row))...)
		}
	}
	p := &execute.Page{Columns: b.cols, Rows: b.rows, Bytes: b.bytes}
	*b = Builder{}
	return p
}
