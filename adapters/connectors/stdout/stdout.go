package stdout

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Type is the connector's type name.
const Type = "stdout"

// Connector is the stdout sink.
type Connector struct {
	mu     sync.Mutex // serializes page writes of concurrent sinks to the shared writer
	w      io.Writer
	redact func(string) string // nil: lines are written as encoded
}

// Option configures the connector.
type Option func(*Connector)

// WithWriter sends output to w instead of os.Stdout.
func WithWriter(w io.Writer) Option {
	return func(c *Connector) { c.w = w }
}

// WithRedactor passes every line through redact before it is written. The server uses
// it (SPEC §14.1): its stdout is a log that operators and log shippers read, and a row
// may carry a secret param's value or a URL with a password.
func WithRedactor(redact func(string) string) Option {
	return func(c *Connector) { c.redact = redact }
}

// New returns the stdout connector.
func New(opts ...Option) *Connector {
	c := &Connector{w: os.Stdout}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Spec declares the connector; it has no config keys.
func (*Connector) Spec() pipeline.Spec {
	return pipeline.Spec{
		Type:        Type,
		Roles:       pipeline.RoleSink,
		Description: "Writes every row to standard output as one JSON object per line, keys in column order.",
		Fields:      []pipeline.FieldSpec{},
	}
}

// OpenSink returns a sink writing to the connector's writer.
func (c *Connector) OpenSink(context.Context, execute.WriteRequest) (execute.Sink, error) {
	return &sink{c: c}, nil
}

type flusher interface{ Flush() error }

type sink struct {
	c   *Connector
	buf []byte
}

func (s *sink) Write(ctx context.Context, p *execute.Page) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stdout: %w", err)
	}
	enc := jsonenc.NewRowEncoder(p.Columns)
	buf := s.buf[:0]
	for i, row := range p.Rows {
		var err error
		if buf, err = enc.AppendRow(buf, row); err != nil {
			return fmt.Errorf("stdout: row %d: %w", i+1, err)
		}
	}
	s.buf = buf
	if len(buf) == 0 {
		return nil
	}
	if s.c.redact != nil {
		buf = s.c.redactLines(buf)
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if _, err := s.c.w.Write(buf); err != nil {
		return fmt.Errorf("stdout: write page: %w", err)
	}
	if f, ok := s.c.w.(flusher); ok {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("stdout: flush page: %w", err)
		}
	}
	// Don't keep a buffer sized for an unusually large page alive between pages.
	if cap(s.buf) > 8<<20 {
		s.buf = nil
	}
	return nil
}

// redactLines returns buf with each line passed through the redactor; a line is one row,
// so a value never spans two calls.
func (c *Connector) redactLines(buf []byte) []byte {
	out := make([]byte, 0, len(buf))
	for line := range bytes.Lines(buf) {
		body := bytes.TrimSuffix(line, []byte("\n"))
		out = append(out, c.redact(string(body))...)
		if len(body) < len(line) {
			out = append(out, '\n')
		}
	}
	return out
}

func (*sink) Commit(context.Context) error   { return nil }
func (*sink) Abort(context.Context) error    { return nil }
func (*sink) Durability() execute.Durability { return execute.PerPage }
