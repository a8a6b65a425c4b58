package jsonlines

import (
	"bytes"
	"unicode/utf8"
)

// Format is the execute.Encoding format of pages whose Data holds one JSON object per
// line, each line ended by '\n'. Data belongs to the sink once handed over: a source
// allocates a fresh buffer for every page (a Kafka sink's messages point into it until
// the brokers acknowledge them).
const Format = "json-lines"

// maxDepth bounds nesting as encoding/json does, so a hostile value cannot exhaust the
// stack.
const maxDepth = 10000

// Append appends the object b as one line. b passes as it is (without surrounding
// whitespace) when it is a well-formed object that fits a line; anything else goes to
// slow, which decodes it — returning the decoded read's error for what is not an object —
// and appends the object encoded again, ending with '\n'.
func Append(dst, b []byte, slow func(dst, b []byte) ([]byte, error)) ([]byte, error) {
	if t, ok := line(b); ok {
		dst = append(dst, t...)
		return append(dst, '\n'), nil
	}
	out, err := slow(dst, b)
	if err != nil {
		return dst, err
	}
	if len(out) == len(dst) || out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return out, nil
}

// Lines calls each for every line of data (without its '\n').
func Lines(data []byte, each func(line []byte)) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			each(data)
			return
		}
		each(data[:i])
		data = data[i+1:]
	}
}

// Count is the number of lines of data.
func Count(data []byte) int {
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// line returns b without surrounding spaces and tabs when it is exactly one well-formed
// JSON object with valid UTF-8 and no line break anywhere (a line break can only stand
// between tokens, never inside a string).
func line(b []byte) ([]byte, bool) {
	b = bytes.Trim(b, " \t")
	if len(b) < 2 || b[0] != '{' || bytes.IndexByte(b, '\n') >= 0 || bytes.IndexByte(b, '\r') >= 0 {
		return nil, false
	}
	end, ok := value(b, 0, 0)
	return b, ok && end == len(b)
}

func ws(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// value checks the value at b[i] and returns the index past it.
func value(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '{':
		return object(b, i, depth+1)
	case c == '[':
		return array(b, i, depth+1)
	case c == '"':
		return str(b, i)
	case c == 't':
		return word(b, i, "true")
	case c == 'f':
		return word(b, i, "false")
	case c == 'n':
		return word(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return number(b, i)
	}
	return 0, false
}

func object(b []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	return list(b, i, '}', func(i int) (int, bool) {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		i, ok := str(b, i)
		if !ok {
			return 0, false
		}
		if i = ws(b, i); i >= len(b) || b[i] != ':' {
			return 0, false
		}
		return value(b, ws(b, i+1), depth)
	})
}

func array(b []byte, i, depth int) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	return list(b, i, ']', func(i int) (int, bool) { return value(b, i, depth) })
}

// list checks what follows the bracket at b[i]: members separated by commas up to the
// closing bracket; member checks one and returns the index past it.
func list(b []byte, i int, closing byte, member func(i int) (int, bool)) (int, bool) {
	i = ws(b, i+1)
	if i < len(b) && b[i] == closing {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = member(i); !ok {
			return 0, false
		}
		if i = ws(b, i); i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = ws(b, i+1)
		case closing:
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// str checks the string starting at b[i] == '"': escapes, no control characters, valid
// UTF-8.
func str(b []byte, i int) (int, bool) {
	start, ascii := i+1, true
	for j := start; j < len(b); j++ {
		c := b[j]
		switch {
		case c == '"':
			return j + 1, ascii || utf8.Valid(b[start:j])
		case c == '\\':
			if j+1 >= len(b) {
				return 0, false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(b) || !hex4(b[j+2:j+6]) {
					return 0, false
				}
				j += 5
			default:
				return 0, false
			}
		case c < 0x20:
			return 0, false
		case c >= 0x80:
			ascii = false
		}
	}
	return 0, false
}

func hex4(h []byte) bool {
	for _, c := range h {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func word(b []byte, i int, w string) (int, bool) {
	if len(b)-i < len(w) || string(b[i:i+len(w)]) != w {
		return 0, false
	}
	return i + len(w), true
}

// number checks -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? at b[i].
func number(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
