package pipeline

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidConfig is wrapped by every configuration error (Errors, SyntaxError).
var ErrInvalidConfig = errors.New("invalid config")

// ErrInvalidParams is wrapped by Errors that hold a problem with the supplied param values
// (SPEC §14.2: invalid_params) rather than with the config itself; such Errors are
// ErrInvalidConfig too, so callers that only know config errors still stop on them.
var ErrInvalidParams = errors.New("invalid params")

// FieldError is one problem at one place in a config.
type FieldError struct {
	Path    string // dotted path, e.g. pipeline.sink.config.key
	Pos     Pos    // where in the text, when known
	Message string
	// Param names the param when the problem is its supplied value (or its absence), not
	// the config's text.
	Param string
}

func (e FieldError) String() string {
	loc := ""
	if e.Pos.Line > 0 {
		loc = " (" + e.Pos.String() + ")"
	}
	if e.Path == "" {
		return e.Message + loc
	}
	return e.Path + ": " + e.Message + loc
}

// Errors is every problem found in a config; validation never stops at the first.
type Errors []FieldError

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return "invalid config: " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrInvalidConfig) true, and errors.Is(err, ErrInvalidParams)
// when a problem is about a param's value.
func (es Errors) Is(target error) bool {
	if target == ErrInvalidParams {
		for _, e := range es {
			if e.Param != "" {
				return true
			}
		}
	}
	return target == ErrInvalidConfig
}

// Err returns nil when there are no errors, so callers can `return es.Err()`.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// SyntaxError is text that could not be decoded at all (malformed YAML or JSON).
type SyntaxError struct {
	Pos     Pos
	Message string
}

func (e *SyntaxError) Error() string {
	if e.Pos.Line > 0 {
		return fmt.Sprintf("invalid config: %s: %s", e.Pos, e.Message)
	}
	return "invalid config: " + e.Message
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *SyntaxError) Is(target error) bool { return target == ErrInvalidConfig }

// String is "line L, column C", or "line L" when the column is unknown (some YAML errors
// carry only a line).
func (p Pos) String() string {
	if p.Column > 0 {
		return fmt.Sprintf("line %d, column %d", p.Line, p.Column)
	}
	return fmt.Sprintf("line %d", p.Line)
}
