package builtin

import (
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/sluicehq/sluice/adapters/connectors"
	"github.com/sluicehq/sluice/adapters/connectors/file"
	"github.com/sluicehq/sluice/adapters/connectors/generate"
	httpconn "github.com/sluicehq/sluice/adapters/connectors/http"
	"github.com/sluicehq/sluice/adapters/connectors/kafka"
	"github.com/sluicehq/sluice/adapters/connectors/mysql"
	"github.com/sluicehq/sluice/adapters/connectors/postgres"
	"github.com/sluicehq/sluice/adapters/connectors/s3"
	"github.com/sluicehq/sluice/adapters/connectors/sqlite"
	"github.com/sluicehq/sluice/adapters/connectors/stdout"
)

type options struct {
	stdout   io.Writer
	redact   func(string) string
	client   *http.Client
	checkURL func(context.Context, *url.URL) error
}

// Option configures the builtin connectors.
type Option func(*options)

// WithStdout sends the stdout sink's output to w (default os.Stdout); serve in MCP stdio
// mode must not write rows to its protocol stream.
func WithStdout(w io.Writer) Option { return func(o *options) { o.stdout = w } }

// WithStdoutRedactor passes every line the stdout sink writes through redact (serve:
// SPEC §14.1).
func WithStdoutRedactor(redact func(string) string) Option {
	return func(o *options) { o.redact = redact }
}

// WithHTTPClient sets the client file sources and the http source use for http(s) URLs.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.client = c } }

// WithURLCheck makes every URL a connector fetches (and every redirect) pass check — the
// server's outbound host policy.
func WithURLCheck(check func(context.Context, *url.URL) error) Option {
	return func(o *options) { o.checkURL = check }
}

// Registry returns a registry of every builtin connector.
func Registry(opts ...Option) *connectors.Registry {
	var o options
	for _, f := range opts {
		f(&o)
	}
	var fileOpts []file.Option
	if o.client != nil {
		fileOpts = append(fileOpts, file.WithHTTPClient(o.client))
	}
	if o.checkURL != nil {
		fileOpts = append(fileOpts, file.WithURLCheck(o.checkURL))
	}
	var httpOpts []httpconn.Option
	if o.client != nil {
		httpOpts = append(httpOpts, httpconn.WithHTTPClient(o.client))
	}
	if o.checkURL != nil {
		httpOpts = append(httpOpts, httpconn.WithURLCheck(o.checkURL))
	}
	var stdoutOpts []stdout.Option
	if o.stdout != nil {
		stdoutOpts = append(stdoutOpts, stdout.WithWriter(o.stdout))
	}
	if o.redact != nil {
		stdoutOpts = append(stdoutOpts, stdout.WithRedactor(o.redact))
	}
	return connectors.New(
		file.New(fileOpts...),
		generate.New(),
		httpconn.New(httpOpts...),
		kafka.New(),
		mysql.New(),
		postgres.New(),
		s3.New(),
		sqlite.New(),
		stdout.New(stdoutOpts...),
	)
}
