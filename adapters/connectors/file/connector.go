package file

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Type is the connector's type name.
const Type = "file"

// Connector is the file source and sink.
type Connector struct {
	client   *http.Client
	checkURL func(context.Context, *url.URL) error
}

// Option configures the connector.
type Option func(*Connector)

// WithHTTPClient sets the client used for http(s) sources (default: a fresh client).
func WithHTTPClient(c *http.Client) Option {
	return func(f *Connector) { f.client = c }
}

// WithURLCheck installs a policy every fetched URL — and every redirect target — must
// pass (the server's outbound host policy); its error is returned as the read error.
func WithURLCheck(check func(context.Context, *url.URL) error) Option {
	return func(f *Connector) { f.checkURL = check }
}

// New returns the file connector.
func New(opts ...Option) *Connector {
	c := &Connector{}
	for _, o := range opts {
		o(c)
	}
	if c.client == nil {
		c.client = &http.Client{}
	}
	if c.checkURL != nil {
		client := *c.client
		prev := client.CheckRedirect
		check := c.checkURL
		client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if err := check(req.Context(), req.URL); err != nil {
				return err
			}
			if prev != nil {
				return prev(req, via)
			}
			if len(via) >= 10 {
				return fmt.Errorf("stopped after 10 redirects")
			}
			return nil
		}
		c.client = &client
	}
	return c
}

// Spec declares the config keys of both roles.
func (*Connector) Spec() pipeline.Spec {
	return pipeline.Spec{
		Type:  Type,
		Roles: pipeline.RoleBoth,
		// A glob source shards by path hash; the sink writes one file that concurrent
		// shards would clobber.
		Shardable:    true,
		SingleObject: true,
		Description:  "CSV, JSONL or Parquet files. Source: a local path, a glob (files read in sorted order) or one http(s):// URL (CSV, JSONL). Sink: a local path, written to a temp file and renamed on success.",
		Fields: append(append([]pipeline.FieldSpec{
			{Name: "path", Type: pipeline.FieldString, Required: true,
				Description: "Source: a local path, a glob such as data/*.csv, or one http(s):// URL. Sink: a local path. Relative paths resolve against the config file's directory."},
		}, format.Fields("csv, jsonl or parquet; by default taken from the path's extension (.csv, .jsonl, .ndjson, .parquet).")...),
			cfg.BatchSizeField(),
			writeModeField(),
			retry.Field(),
		),
		Check: check,
	}
}

// writeModeField is the shared write_mode key; files accept only two of its modes, which
// Check enforces with a message saying why.
func writeModeField() pipeline.FieldSpec {
	f := cfg.Field(pipeline.SinkWriteFields(), pipeline.KeyWriteMode)
	f.Description = "append adds rows to the end of the file; overwrite replaces the file. upsert and delete are refused: files have no keys."
	return f
}

func check(role pipeline.Role, c map[string]any, path string) pipeline.Errors {
	errs := retry.Check(c, path)
	add := func(key string, err error) {
		errs = append(errs, pipeline.FieldError{Path: pipeline.Join(path, key), Message: err.Error()})
	}
	p, err := cfg.String(c, "path", "")
	if err != nil {
		add("path", err)
	}
	name := nameOf(p)
	if strings.Contains(p, "${") {
		name = ""
	}
	ferrs := format.Check(c, name)
	for _, key := range []string{"format", "delimiter", "compression", "row_group_rows"} {
		if err := ferrs[key]; err != nil {
			add(key, err)
		}
	}
	if p != "" {
		if role == pipeline.RoleSink {
			if err := sinkPathError(p); err != nil {
				add("path", err)
			}
		}
	}
	if role == pipeline.RoleSink {
		if _, err := sinkModeOf(c); err != nil {
			add("write_mode", err)
		}
	}
	return errs
}

func sinkPathError(p string) error {
	if isURL(p) {
		return fmt.Errorf("a file sink writes local files only, not URLs")
	}
	if hasGlob(p) {
		return fmt.Errorf("a file sink path cannot be a glob pattern: %q", p)
	}
	return nil
}

func sinkModeOf(c map[string]any) (pipeline.WriteMode, error) {
	m, err := cfg.WriteModeOf(c)
	if err != nil {
		return "", err
	}
	switch m {
	case pipeline.Append, pipeline.Overwrite:
		return m, nil
	case pipeline.Upsert, pipeline.Delete:
		return "", fmt.Errorf("write_mode %s needs rows addressable by key, which files are not; use append or overwrite, or a database sink such as sqlite", m)
	}
	return "", fmt.Errorf("unknown write_mode %q; a file sink supports append or overwrite", m)
}
