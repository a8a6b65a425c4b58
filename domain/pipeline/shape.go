package pipeline

import (
	"bytes"
	"fmt"
)

// Shape limits of a config or a JSON request body (SPEC §14.3). They are checked on the
// raw text, before a parser builds anything: a YAML or JSON parser allocates per level of
// nesting, and an 18 KB text of nested lists (depth 9,000) used to cost a server over
// 300 MB before any check ran.
const (
	MaxDepth = 64
	MaxNodes = 100_000
)

// CheckShape refuses text whose nesting is deeper than MaxDepth or that holds more than
// MaxNodes values, without parsing it. It reads YAML (block and flow style) and JSON, and
// errs on the side of counting: a block scalar's lines are skipped, quoted text and
// comments are ignored. The error is Errors with the line where the limit was passed.
func CheckShape(text []byte) error {
	s := shapeScan{}
	for n, line := range bytes.Split(text, []byte("\n")) {
		if err := s.line(line, n+1); err != nil {
			return err
		}
	}
	return nil
}

// shapeScan carries the state between lines: open flow brackets, the indentation of the
// open block levels, and a block scalar being skipped.
type shapeScan struct {
	flow       int   // open [ and { (they may span lines)
	indents    []int // indentation of each open block level
	nodes      int
	scalarFrom int  // skip lines indented deeper than this: a block scalar's text
	inScalar   bool // a block scalar is open
	quote      byte // an open quoted flow scalar spanning lines ('"' or '\'')
}

func (s *shapeScan) line(line []byte, n int) error {
	line = bytes.TrimRight(line, "\r")
	indent := 0
	for indent < len(line) && line[indent] == ' ' {
		indent++
	}
	body := line[indent:]
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if s.inScalar {
		if indent > s.scalarFrom {
			return nil
		}
		s.inScalar = false
	}
	if s.flow == 0 && s.quote == 0 {
		if body[0] == '#' {
			return nil
		}
		for len(s.indents) > 0 && s.indents[len(s.indents)-1] >= indent {
			s.indents = s.indents[:len(s.indents)-1]
		}
		s.indents = append(s.indents, indent)
		// Each "- " opening the line is one more level: "- - - x" nests three lists.
		for len(body) >= 2 && body[0] == '-' && (body[1] == ' ' || body[1] == '\t') {
			indent += 2
			s.indents = append(s.indents, indent)
			body = bytes.TrimLeft(body[1:], " \t")
		}
		s.nodes++
	}
	prev := byte(0) // the last non-blank character before i on this line
	for i := 0; i < len(body); i++ {
		c := body[i]
		if s.quote != 0 {
			switch {
			case c == '\\' && s.quote == '"':
				i++
			case c == s.quote:
				s.quote = 0
				prev = c
			}
			continue
		}
		// Brackets and quotes start a value only where a value may start; inside a plain
		// scalar ("pattern: a[0]") they are text.
		valueStart := prev == 0 || bytes.IndexByte([]byte(":-,[{?"), prev) >= 0
		switch c {
		case '"', '\'':
			if valueStart {
				s.quote = c
			}
		case '#':
			if i == 0 || body[i-1] == ' ' || body[i-1] == '\t' {
				i = len(body)
			}
		case '[', '{':
			if valueStart {
				s.flow++
				s.nodes++
			}
		case ']', '}':
			if s.flow > 0 {
				s.flow--
			}
		case ',':
			if s.flow > 0 {
				s.nodes++
			}
		case ':':
			if s.flow == 0 && (i+1 == len(body) || body[i+1] == ' ' || body[i+1] == '\t') {
				s.nodes++
			}
		case '|', '>':
			if s.flow == 0 && valueStart && blockScalarHeader(body[i+1:]) {
				s.inScalar, s.scalarFrom = true, indent
				i = len(body)
			}
		}
		if c != ' ' && c != '\t' {
			prev = c
		}
		if err := s.check(n); err != nil {
			return err
		}
	}
	return s.check(n)
}

// check reports a limit passed at line n.
func (s *shapeScan) check(n int) error {
	// The root's own line is not a level of nesting: "[[1]]" nests two deep. (A key
	// holding a flow list may pass by one; the parser's own check is exact.)
	if depth := s.flow + max(len(s.indents)-1, 0); depth > MaxDepth {
		return Errors{{Pos: Pos{Line: n}, Message: fmt.Sprintf(
			"the document nests deeper than %d levels (the limit of a config or request body)", MaxDepth)}}
	}
	if s.nodes > MaxNodes {
		return Errors{{Pos: Pos{Line: n}, Message: fmt.Sprintf(
			"the document holds more than %d values (the limit of a config or request body)", MaxNodes)}}
	}
	return nil
}

// blockScalarHeader reports whether rest (after | or >) is a block scalar header: only
// chomping/indentation indicators, then the end of the line or a comment.
func blockScalarHeader(rest []byte) bool {
	for i, c := range rest {
		switch {
		case c == '+' || c == '-' || (c >= '1' && c <= '9'):
		case c == ' ' || c == '\t':
			t := bytes.TrimSpace(rest[i:])
			return len(t) == 0 || t[0] == '#'
		default:
			return false
		}
	}
	return true
}
