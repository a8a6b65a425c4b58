package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// objectParser decodes one JSONL line: a JSON object whose keys are returned in the
// order written (encoding/json's maps lose it, and a page's columns follow it). Scalars
// are decoded here; nested objects and arrays are delegated to encoding/json. Keys are
// interned because the same few repeat on every line.
type objectParser struct {
	intern map[string]string
	keys   []string
}

const maxInterned = 4096

func newObjectParser() objectParser {
	return objectParser{intern: make(map[string]string)}
}

var errEnd = errors.New("unexpected end of line")

// parse returns the keys (valid until the next call) and fresh values of one object.
func (p *objectParser) parse(b []byte) ([]string, []any, error) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, nil, fmt.Errorf("expected a JSON object, found %s", found(b, i))
	}
	i = skipWS(b, i+1)
	vals := make([]any, 0, max(len(p.keys), 4)) // sized like the previous line
	p.keys = p.keys[:0]
	if i < len(b) && b[i] == '}' {
		return p.keys, vals, trailing(b, i+1)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, nil, fmt.Errorf("expected a quoted key, found %s", found(b, i))
		}
		key, n, err := p.key(b, i)
		if err != nil {
			return nil, nil, err
		}
		i = skipWS(b, n)
		if i >= len(b) || b[i] != ':' {
			return nil, nil, fmt.Errorf("expected ':' after key %q, found %s", key, found(b, i))
		}
		i = skipWS(b, i+1)
		v, n, err := value(b, i)
		if err != nil {
			return nil, nil, fmt.Errorf("key %q: %w", key, err)
		}
		i = skipWS(b, n)
		if dup := indexOf(p.keys, key); dup >= 0 {
			vals[dup] = v // the last duplicate wins, as in encoding/json
		} else {
			p.keys = append(p.keys, key)
			vals = append(vals, v)
		}
		if i >= len(b) {
			return nil, nil, errEnd
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return p.keys, vals, trailing(b, i+1)
		default:
			return nil, nil, fmt.Errorf("expected ',' or '}', found %s", found(b, i))
		}
	}
}

func indexOf(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

func trailing(b []byte, i int) error {
	if i = skipWS(b, i); i < len(b) {
		return fmt.Errorf("unexpected %s after the object", found(b, i))
	}
	return nil
}

func found(b []byte, i int) string {
	if i >= len(b) {
		return "end of line"
	}
	r, _ := utf8.DecodeRune(b[i:])
	return strconv.QuoteRune(r)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func (p *objectParser) key(b []byte, i int) (string, int, error) {
	end, plain, err := scanString(b, i)
	if err != nil {
		return "", 0, err
	}
	if !plain {
		s, err := unquote(b[i:end])
		return s, end, err
	}
	raw := b[i+1 : end-1]
	if s, ok := p.intern[string(raw)]; ok {
		return s, end, nil
	}
	s := string(raw)
	if len(p.intern) < maxInterned {
		p.intern[s] = s
	}
	return s, end, nil
}

// scanString finds the end of the string starting at b[i] == '"' (the index after the
// closing quote). plain reports that the content needs no unescaping or validation.
func scanString(b []byte, i int) (end int, plain bool, err error) {
	plain = true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			if plain && !utf8.Valid(b[i+1:j]) {
				plain = false
			}
			return j + 1, plain, nil
		case c == '\\':
			plain = false
			j++
		case c < 0x20:
			return 0, false, fmt.Errorf("control character %q in a string", c)
		}
	}
	return 0, false, fmt.Errorf("unterminated string")
}

func unquote(raw []byte) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("invalid string: %w", err)
	}
	return s, nil
}

func value(b []byte, i int) (any, int, error) {
	if i >= len(b) {
		return nil, i, errEnd
	}
	switch c := b[i]; {
	case c == '"':
		end, plain, err := scanString(b, i)
		if err != nil {
			return nil, 0, err
		}
		if plain {
			return string(b[i+1 : end-1]), end, nil
		}
		s, err := unquote(b[i:end])
		return s, end, err
	case c == '-' || c >= '0' && c <= '9':
		return number(b, i)
	case c == 't':
		return literal(b, i, "true", true)
	case c == 'f':
		return literal(b, i, "false", false)
	case c == 'n':
		return literal(b, i, "null", nil)
	case c == '{' || c == '[':
		end, err := skipComposite(b, i)
		if err != nil {
			return nil, 0, err
		}
		dec := json.NewDecoder(bytes.NewReader(b[i:end]))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, 0, fmt.Errorf("invalid JSON: %w", err)
		}
		return convertNumbers(v), end, nil
	}
	return nil, 0, fmt.Errorf("unexpected %s", found(b, i))
}

func literal(b []byte, i int, word string, v any) (any, int, error) {
	if !bytes.HasPrefix(b[i:], []byte(word)) {
		return nil, 0, fmt.Errorf("unexpected %s", found(b, i))
	}
	return v, i + len(word), nil
}

// number scans a JSON number. Written without fraction or exponent and within range it
// is an int64; anything else is a float64.
func number(b []byte, i int) (any, int, error) {
	j := i
	if b[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j - k
	}
	intStart := j
	if n := digits(); n == 0 || n > 1 && b[intStart] == '0' {
		return nil, 0, fmt.Errorf("invalid number (%d bytes; values are never quoted)", j-i)
	}
	isFloat := false
	if j < len(b) && b[j] == '.' {
		j++
		if digits() == 0 {
			return nil, 0, fmt.Errorf("invalid number (%d bytes; values are never quoted)", j-i)
		}
		isFloat = true
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return nil, 0, fmt.Errorf("invalid number (%d bytes; values are never quoted)", j-i)
		}
		isFloat = true
	}
	if !isFloat {
		if v, ok := parseInt(b[i:j]); ok {
			return v, j, nil
		}
	}
	f, err := strconv.ParseFloat(string(b[i:j]), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, 0, fmt.Errorf("invalid number (%d bytes; values are never quoted)", j-i)
	}
	if math.IsInf(f, 0) {
		return nil, 0, fmt.Errorf("a number of %d digits is out of range", j-i)
	}
	return f, j, nil
}

// parseInt parses validated decimal digits with an optional '-' without allocating.
func parseInt(b []byte) (int64, bool) {
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var u uint64
	for _, c := range b {
		d := uint64(c - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// skipComposite finds the end of the object or array starting at b[i]. It only balances
// brackets outside strings; encoding/json validates the content.
func skipComposite(b []byte, i int) (int, error) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end, _, err := scanString(b, j)
			if err != nil {
				return 0, err
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, errEnd
}

// convertNumbers turns json.Number values inside nested values into int64 or float64.
func convertNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if vi, ok := parseIntText(string(x)); ok {
			return vi
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = convertNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = convertNumbers(e)
		}
	}
	return v
}

func parseIntText(s string) (int64, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '.' || c == 'e' || c == 'E' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}
