package records

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// parseObject is the fast path of DecodeObject: one pass over a JSON object whose keys
// and values it types itself, leaving only nested objects and arrays and escaped strings
// to encoding/json. ok is false when b is not a well-formed object; the caller then runs
// the slow path, which words the error.
func parseObject(b []byte) (Object, bool) {
	o := make(Object, 8)
	ok := eachField(b, func(key []byte, v any) { o[string(key)] = v })
	return o, ok
}

// eachField calls set for every key and value of the object b, in order; false when b is
// not a well-formed object (set may have been called for some fields by then).
func eachField(b []byte, set func(key []byte, v any)) bool {
	i := skip(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skip(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skip(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		end, ok := stringEnd(b, i)
		if !ok {
			return false
		}
		key := b[i+1 : end-1]
		if !plain(key) {
			k, ok := text(b[i:end])
			if !ok {
				return false
			}
			key = []byte(k)
		}
		i = skip(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skip(b, i+1)
		var v any
		if v, i, ok = value(b, i); !ok {
			return false
		}
		set(key, v)
		i = skip(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skip(b, i+1)
		case '}':
			return skip(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// plain reports string content that needs no decoding: valid UTF-8 without escapes or
// control characters.
func plain(inner []byte) bool {
	for _, c := range inner {
		if c == '\\' || c < 0x20 {
			return false
		}
	}
	return utf8.Valid(inner)
}

func skip(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] == '"'.
func stringEnd(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// text decodes a quoted string token; without escapes and with valid UTF-8 it is the
// bytes between the quotes.
func text(tok []byte) (string, bool) {
	if inner := tok[1 : len(tok)-1]; plain(inner) {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return "", false
	}
	return s, true
}

// value decodes the value at b[i] and returns the index past it.
func value(b []byte, i int) (any, int, bool) {
	if i >= len(b) {
		return nil, 0, false
	}
	switch c := b[i]; {
	case c == '"':
		end, ok := stringEnd(b, i)
		if !ok {
			return nil, 0, false
		}
		s, ok := text(b[i:end])
		return s, end, ok
	case c == 't':
		return literal(b, i, "true", true)
	case c == 'f':
		return literal(b, i, "false", false)
	case c == 'n':
		return literal(b, i, "null", nil)
	case c == '-' || (c >= '0' && c <= '9'):
		j := i + 1
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] == '+' || b[j] == '-') {
			j++
		}
		return number(b[i:j]), j, validNumber(b[i:j])
	case c == '{' || c == '[':
		end, ok := compositeEnd(b, i)
		if !ok {
			return nil, 0, false
		}
		v, err := decodeSlow(b[i:end])
		return v, end, err == nil
	}
	return nil, 0, false
}

func literal(b []byte, i int, word string, v any) (any, int, bool) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return nil, 0, false
	}
	return v, i + len(word), true
}

// number types a JSON number as Normalize does: int64 when whole and in range.
func number(tok []byte) any {
	// Only a token without a fraction or exponent can be an integer; asking ParseInt
	// about "1.25" first costs an error value (allocated) for every such number.
	if bytes.IndexAny(tok, ".eE") < 0 {
		if n, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
			return n
		}
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return string(tok)
	}
	return f
}

// validNumber checks the JSON number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(tok []byte) bool {
	i := 0
	if i < len(tok) && tok[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(tok) && tok[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(tok) && tok[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		if i < len(tok) && (tok[i] == '+' || tok[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(tok)
}

// compositeEnd returns the index past the object or array starting at b[i].
func compositeEnd(b []byte, i int) (int, bool) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end, ok := stringEnd(b, j)
			if !ok {
				return 0, false
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}
