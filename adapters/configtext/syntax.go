package configtext

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sluicehq/sluice/domain/pipeline"
)

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

var unknownAnchor = regexp.MustCompile(`unknown anchor '([^']*)' referenced`)

// parserErrors are the yaml.v3 messages raised by its parser rather than its scanner. The
// parser reports a 0-based line (its scanner a 1-based one), so these get one added.
var parserErrors = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
	"found undefined tag handle",
}

// syntaxError turns a yaml.v3 error into a SyntaxError with the best position available:
// exact line and column for JSON text (encoding/json reports byte offsets), the line yaml
// reports otherwise.
func syntaxError(text []byte, err error) *pipeline.SyntaxError {
	if pos, msg, ok := jsonError(text); ok {
		return &pipeline.SyntaxError{Pos: pos, Message: msg}
	}
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		for _, p := range parserErrors {
			if m[2] == p {
				line++
			}
		}
		return &pipeline.SyntaxError{Pos: pipeline.Pos{Line: line}, Message: m[2]}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(text, []byte("*"+m[1])); i >= 0 {
			return &pipeline.SyntaxError{Pos: posAtOffset(text, i), Message: msg}
		}
	}
	if i, ok := badCharacter(text); ok {
		return &pipeline.SyntaxError{Pos: posAtOffset(text, i), Message: msg}
	}
	// yaml.v3 leaves the line out only when the problem is on the first line.
	return &pipeline.SyntaxError{Pos: pipeline.Pos{Line: 1}, Message: msg}
}

// jsonError reports where JSON-looking text stops being JSON. ok is false when the text
// is not meant as JSON or is valid JSON (then yaml's own message is the one to show).
func jsonError(text []byte) (pipeline.Pos, string, bool) {
	trimmed := bytes.TrimLeft(text, " \t\r\n")
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		return pipeline.Pos{}, "", false
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	var v any
	err := dec.Decode(&v)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		at := int(se.Offset) - 1
		if at < 0 {
			at = 0
		}
		return posAtOffset(text, at), se.Error(), true
	case errors.Is(err, io.ErrUnexpectedEOF):
		return posAtOffset(text, len(text)), "unexpected end of JSON text: a bracket or quote is not closed", true
	}
	return pipeline.Pos{}, "", false
}

// badCharacter finds the first byte yaml's reader refuses: invalid UTF-8 or a control
// character other than tab and line breaks.
func badCharacter(text []byte) (int, bool) {
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && size <= 1 {
			return i, true
		}
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' && r != 0x85 {
			return i, true
		}
		i += size
	}
	return 0, false
}

// posAtOffset converts a byte offset into a 1-based line and column (in characters).
func posAtOffset(text []byte, off int) pipeline.Pos {
	if off > len(text) {
		off = len(text)
	}
	before := text[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return pipeline.Pos{Line: line, Column: utf8.RuneCount(before[start:]) + 1}
}
