package jsonenc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// ErrUnsupported is wrapped by errors for values JSON cannot represent.
var ErrUnsupported = errors.New("value cannot be encoded as JSON")

const hex = "0123456789abcdef"

// safe[b] is true for ASCII bytes that need no escaping inside a JSON string.
var safe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// AppendString appends s as a quoted JSON string.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but end lines in JavaScript source.
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendFloat appends f as a JSON number (bits is 32 or 64). NaN and infinities have no
// JSON form and are refused.
func AppendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("%w: %v", ErrUnsupported, f)
	}
	return appendFloat(b, f, bits, true), nil
}

// AppendPlainFloat is AppendFloat without the ".0" of whole numbers (for CSV and other
// text where an integer-looking value is wanted).
func AppendPlainFloat(b []byte, f float64, bits int) []byte {
	return appendFloat(b, f, bits, false)
}

func appendFloat(b []byte, f float64, bits int, keepPoint bool) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
		bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// strconv writes e-07; JSON producers conventionally write e-7.
		if n := len(b); n-start >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b
	}
	if keepPoint && !slices.Contains(b[start:], '.') && !math.IsInf(f, 0) && !math.IsNaN(f) {
		b = append(b, '.', '0')
	}
	return b
}

// AppendValue appends one page value as JSON: nil as null, time.Time as an RFC 3339
// string with nanoseconds, []byte as base64, maps with sorted keys. Types outside the
// page model fall back to encoding/json.
func AppendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return AppendString(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		return AppendFloat(b, x, 64)
	case bool:
		return strconv.AppendBool(b, x), nil
	case time.Time:
		b = append(b, '"')
		b = x.AppendFormat(b, time.RFC3339Nano)
		return append(b, '"'), nil
	case []byte:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, x)
		return append(b, '"'), nil
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
	case uint:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case float32:
		return AppendFloat(b, float64(x), 32)
	case json.Number:
		if !json.Valid([]byte(x)) || x == "" {
			return b, fmt.Errorf("%w: invalid number (%d bytes)", ErrUnsupported, len(x))
		}
		return append(b, x...), nil
	case map[string]any:
		return appendMap(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = AppendValue(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case []string:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, e)
		}
		return append(b, ']'), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, fmt.Errorf("%w: %T: %v", ErrUnsupported, v, err)
	}
	return append(b, raw...), nil
}

func appendMap(b []byte, m map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = AppendValue(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// RowEncoder writes rows as JSON objects whose keys follow a page's column order. The
// quoted keys are prepared once per page.
type RowEncoder struct {
	cols     []string
	prefixes [][]byte // `{"a":` then `,"b":` …
}

// NewRowEncoder prepares an encoder for columns.
func NewRowEncoder(cols []string) *RowEncoder {
	e := &RowEncoder{cols: cols, prefixes: make([][]byte, len(cols))}
	for i, c := range cols {
		sep := byte(',')
		if i == 0 {
			sep = '{'
		}
		p := AppendString([]byte{sep}, c)
		e.prefixes[i] = append(p, ':')
	}
	return e
}

// Columns returns the columns the encoder was prepared for.
func (e *RowEncoder) Columns() []string { return e.cols }

// AppendRow appends row as one JSON object followed by a newline. A value that cannot be
// encoded is an error naming its column.
func (e *RowEncoder) AppendRow(b []byte, row []any) ([]byte, error) {
	if len(row) != len(e.cols) {
		return b, fmt.Errorf("row has %d values for %d columns", len(row), len(e.cols))
	}
	if len(row) == 0 {
		return append(b, '{', '}', '\n'), nil
	}
	for i, v := range row {
		b = append(b, e.prefixes[i]...)
		var err error
		if b, err = AppendValue(b, v); err != nil {
			return b, fmt.Errorf("column %q: %w", e.cols[i], err)
		}
	}
	return append(b, '}', '\n'), nil
}

// Integer is v as an int64 when it is one of Go's integer types and fits (never a float
// or a text: whoever needs those parsed decides how). Encoders of typed formats (Parquet
// columns, PostgreSQL's COPY BINARY) share it so they accept the same values.
func Integer(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	}
	return 0, false
}
