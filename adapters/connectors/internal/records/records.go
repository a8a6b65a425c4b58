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
	objs  []Object
}

// Add appends one object.
func (b *Builder) Add(o Object) {
	if b.index == nil {
		b.index = map[string]int{}
	}
	var fresh []string
	for k := range o {
		if _, ok := b.index[k]; !ok {
			fresh = append(fresh, k)
		}
	}
	// Map order is random; sorting the keys an object adds keeps a page's columns the
	// same on every read of the same data.
	slices.Sort(fresh)
	for _, k := range fresh {
		b.index[k] = len(b.cols)
		b.cols = append(b.cols, k)
	}
	b.objs = append(b.objs, o)
}

// Len is the number of objects added since the last Page.
func (b *Builder) Len() int { return len(b.objs) }

// Page returns the objects added so far as a page (nil when there are none) and resets
// the builder.
func (b *Builder) Page() *execute.Page {
	if len(b.objs) == 0 {
		return nil
	}
	p := &execute.Page{Columns: b.cols, Rows: make([][]any, len(b.objs))}
	for i, o := range b.objs {
		row := make([]any, len(b.cols))
		for k, v := range o {
			row[b.index[k]] = v
		}
		p.Rows[i] = row
		p.Bytes += pager.Size(row)
	}
	*b = Builder{}
	return p
}
