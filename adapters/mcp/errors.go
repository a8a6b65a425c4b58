package mcp

import (
	"context"
	"encoding/json"
)

// toolError is a refused tool call. Its text is the REST error body of SPEC §2.9, so an
// agent reads the same code, message and field paths a REST client would.
type toolError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

func (e *toolError) Error() string {
	b, err := json.Marshal(map[string]any{"error": e})
	if err != nil {
		// Details are plain JSON data the REST layer also encodes; keep the code anyway.
		return `{"error":{"code":"` + e.Code + `","message":"the error details do not encode"}}`
	}
	return string(b)
}

// fail maps err through the one error table. An error the table does not know is logged
// (the classifier redacts nothing it cannot match, so only its code leaves the server).
func (s *Server) fail(ctx context.Context, tool string, err error) error {
	code, msg, details, known := s.deps.Errors(err)
	if !known {
		s.log.ErrorContext(ctx, "mcp tool failed", "tool", tool, "code", code)
	}
	return &toolError{Code: code, Message: msg, Details: details}
}

// badArgument refuses an argument before any use-case is called, like a REST body the
// decoder refuses (invalid_body).
func badArgument(field, msg string) error {
	return &toolError{Code: "invalid_body", Message: field + ": " + msg, Details: map[string]any{"field": field}}
}
