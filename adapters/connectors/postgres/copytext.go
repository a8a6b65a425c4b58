package postgres

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
)

// kind is what a table column needs from a value's text form.
type kind uint8

const (
	kindPlain kind = iota // the value's natural text; PostgreSQL's input function converts it
	kindJSON              // json, jsonb: JSON text
	kindBytea             // bytea: bytes in hex
	kindArray             // arrays: a PostgreSQL array literal
)

// appendCopy appends v as one field of a COPY text row (see the package doc for the
// forms). Everything written goes through copyEscape, so no value can break the row.
func appendCopy(b []byte, k kind, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, '\\', 'N'), nil
	case string:
		return copyEscape(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		return appendFloat(b, x, 64), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case time.Time:
		if k == kindJSON {
			return jsonText(b, x)
		}
		return x.UTC().AppendFormat(b, time.RFC3339Nano), nil
	case []byte:
		switch {
		case k == kindBytea:
			b = append(b, '\\', '\\', 'x')
			return appendHex(b, x), nil
		case k == kindJSON:
			return jsonText(b, x)
		case utf8.Valid(x):
			return copyEscape(b, string(x)), nil
		}
		b = append(b, '\\', '\\', 'x')
		return appendHex(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case float32:
		return appendFloat(b, float64(x), 32), nil
	case json.Number:
		return copyEscape(b, string(x)), nil
	case []any:
		if k == kindArray {
			lit, err := appendArray(nil, x)
			if err != nil {
				return b, err
			}
			return copyEscape(b, string(lit)), nil
		}
		return jsonText(b, x)
	case []string:
		if k == kindArray {
			list := make([]any, len(x))
			for i, s := range x {
				list[i] = s
			}
			return appendCopy(b, k, list)
		}
		return jsonText(b, x)
	case map[string]any:
		return jsonText(b, x)
	}
	return b, fmt.Errorf("unsupported value type %T", v)
}

// jsonText appends v's JSON form, escaped for COPY.
func jsonText(b []byte, v any) ([]byte, error) {
	j, err := jsonenc.AppendValue(nil, v)
	if err != nil {
		return b, err
	}
	return copyEscape(b, string(j)), nil
}

// appendFloat writes the shortest text that reads back as the same float; PostgreSQL
// spells the special values NaN, Infinity and -Infinity.
func appendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

func appendHex(b, x []byte) []byte {
	const hex = "0123456789abcdef"
	for _, c := range x {
		b = append(b, hex[c>>4], hex[c&15])
	}
	return b
}

// copyEscape appends s with the characters COPY text gives meaning to escaped.
func copyEscape(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		var esc byte
		switch s[i] {
		case '\\':
			esc = '\\'
		case '\n':
			esc = 'n'
		case '\r':
			esc = 'r'
		case '\t':
			esc = 't'
		default:
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, '\\', esc)
		start = i + 1
	}
	return append(b, s[start:]...)
}

// appendArray writes a PostgreSQL array literal ({1,"two",NULL,{3}}); elements are quoted
// unless they are numbers or booleans, and nested lists become sub-arrays.
func appendArray(b []byte, list []any) ([]byte, error) {
	b = append(b, '{')
	for i, e := range list {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		switch x := e.(type) {
		case nil:
			b = append(b, "NULL"...)
		case []any:
			if b, err = appendArray(b, x); err != nil {
				return b, err
			}
		case int64, int, int32, int16, int8, uint32, uint64, float32, float64, bool, json.Number:
			if b, err = appendCopy(b, kindPlain, x); err != nil {
				return b, err
			}
		default:
			var text []byte
			if text, err = elementText(x); err != nil {
				return b, err
			}
			b = append(b, '"')
			for _, c := range text {
				if c == '"' || c == '\\' {
					b = append(b, '\\')
				}
				b = append(b, c)
			}
			b = append(b, '"')
		}
	}
	return append(b, '}'), nil
}

func elementText(v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return []byte(x), nil
	case time.Time:
		return x.UTC().AppendFormat(nil, time.RFC3339Nano), nil
	case []byte:
		return appendHex([]byte(`\x`), x), nil
	}
	return jsonenc.AppendValue(nil, v)
}
