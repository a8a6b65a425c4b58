package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Type is the connector's type name.
const Type = "postgres"

// Column mappings of the sink.
const (
	MapAuto  = "auto_map"
	MapJSONB = "jsonb"
)

// Connector is the postgres source and sink.
type Connector struct{}

// New returns the postgres connector.
func New() *Connector { return &Connector{} }

// Spec declares the config keys of both roles.
func (*Connector) Spec() pipeline.Spec {
	return pipeline.Spec{
		Type:  Type,
		Roles: pipeline.RoleBoth,
		Description: "A PostgreSQL database: a query as the source (streamed); a table as the sink " +
			"(COPY append, upsert, delete or overwrite; exactly-once with a watermark row).",
		Fields:      fields(),
		ExactlyOnce: true,
		Check:       check,
	}
}

func fields() []pipeline.FieldSpec {
	f := []pipeline.FieldSpec{
		{Name: "connection_url", Type: pipeline.FieldString, Required: true,
			Description: "postgres://user:password@host:port/database?sslmode=…; other parameters (search_path, application_name) become session settings."},
	}
	f = append(f, pipeline.SourceQueryFields()...)
	f = append(f,
		pipeline.FieldSpec{Name: "table_name", Type: pipeline.FieldString, Role: pipeline.RoleSink, Required: true,
			Description: "Table written to, optionally schema.table; names are used exactly as written (case-sensitive)."},
		pipeline.FieldSpec{Name: "column_mapping", Type: pipeline.FieldString, Role: pipeline.RoleSink, Default: MapAuto,
			Enum:        []string{MapAuto, MapJSONB},
			Description: "auto_map writes each column into the table column of the same name; jsonb writes each row as one JSON object into jsonb_column (key columns also as columns)."},
		pipeline.FieldSpec{Name: "jsonb_column", Type: pipeline.FieldString, Role: pipeline.RoleSink, Default: "data",
			Description: "The jsonb column rows are written to with column_mapping: jsonb."},
		pipeline.FieldSpec{Name: "watermark_table", Type: pipeline.FieldString, Role: pipeline.RoleSink, Default: watermark.DefaultTable,
			Description: "Table holding the exactly-once watermarks (created when missing); in table_name's schema unless qualified."},
	)
	return append(f, pipeline.SinkWriteFields()...)
}

func check(role pipeline.Role, c map[string]any, path string) pipeline.Errors {
	var errs pipeline.Errors
	if u, err := cfg.String(c, "connection_url", ""); err == nil && u != "" {
		if err := checkURL(u); err != nil {
			errs = append(errs, pipeline.FieldError{Path: pipeline.Join(path, "connection_url"), Message: err.Error()})
		}
	}
	if role != pipeline.RoleSink {
		return errs
	}
	errs = append(errs, pipeline.CheckWriteMode(c, path)...)
	if _, err := sinkOptionsOf(c); err != nil && err.key != pipeline.KeyKey {
		errs = append(errs, pipeline.FieldError{Path: pipeline.Join(path, err.key), Message: err.msg})
	}
	return errs
}

// checkURL accepts postgres:// and postgresql:// URLs; the value is never echoed, as it
// holds credentials.
func checkURL(u string) error {
	if !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://") {
		return errors.New("must be a postgres:// or postgresql:// URL")
	}
	if _, err := pgx.ParseConfig(u); err != nil {
		return errors.New("is not a valid PostgreSQL URL; check its host, port and parameters")
	}
	return nil
}

type optionError struct{ key, msg string }

func (e *optionError) Error() string { return "config key \"" + e.key + "\": " + e.msg }

type sinkOptions struct {
	table     tableName
	mode      pipeline.WriteMode
	key       []string
	create    bool
	jsonb     bool
	jsonCol   string
	watermark tableName
}

func sinkOptionsOf(c map[string]any) (sinkOptions, *optionError) {
	var o sinkOptions
	t, err := cfg.String(c, "table_name", "")
	if err != nil {
		return o, &optionError{"table_name", err.Error()}
	}
	if o.table, err = parseTable(t); err != nil {
		return o, &optionError{"table_name", err.Error()}
	}
	if o.mode, err = cfg.WriteModeOf(c); err != nil {
		return o, &optionError{"write_mode", err.Error()}
	}
	switch o.mode {
	case pipeline.Append, pipeline.Upsert, pipeline.Delete, pipeline.Overwrite:
	default:
		return o, &optionError{"write_mode", fmt.Sprintf("unknown write_mode %q; use append, upsert, delete or overwrite", o.mode)}
	}
	if o.key, err = cfg.Strings(c, "key"); err != nil {
		return o, &optionError{"key", err.Error()}
	}
	for i, k := range o.key {
		if k == "" {
			return o, &optionError{"key", fmt.Sprintf("item %d is empty", i)}
		}
	}
	if len(o.key) == 0 && (o.mode == pipeline.Upsert || o.mode == pipeline.Delete) {
		return o, &optionError{"key", fmt.Sprintf("write_mode %s needs key: the columns that identify a row, e.g. key: [id]", o.mode)}
	}
	if o.create, err = cfg.Bool(c, "create_table", false); err != nil {
		return o, &optionError{"create_table", err.Error()}
	}
	mapping, err := cfg.String(c, "column_mapping", MapAuto)
	if err != nil {
		return o, &optionError{"column_mapping", err.Error()}
	}
	switch mapping {
	case MapAuto:
	case MapJSONB:
		o.jsonb = true
	default:
		return o, &optionError{"column_mapping", fmt.Sprintf("unknown column_mapping %q; use auto_map or jsonb", mapping)}
	}
	if o.jsonCol, err = cfg.String(c, "jsonb_column", "data"); err != nil {
		return o, &optionError{"jsonb_column", err.Error()}
	}
	if o.jsonb && o.jsonCol == "" {
		return o, &optionError{"jsonb_column", "must name the jsonb column rows are written to"}
	}
	if o.jsonb && contains(o.key, o.jsonCol) {
		return o, &optionError{"jsonb_column", fmt.Sprintf("%q is also a key column; name another column", o.jsonCol)}
	}
	wm, err := cfg.String(c, "watermark_table", watermark.DefaultTable)
	if err != nil {
		return o, &optionError{"watermark_table", err.Error()}
	}
	if o.watermark, err = parseTable(wm); err != nil {
		return o, &optionError{"watermark_table", err.Error()}
	}
	if o.watermark.schema == "" {
		o.watermark.schema = o.table.schema
	}
	return o, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// connect opens one connection with the session settings both roles rely on: ISO dates
// and a stated time zone, so COPY text written by one database parses the same in
// another, whatever their server defaults.
func connect(ctx context.Context, raw string) (*pgx.Conn, *scrubber, error) {
	sc := newScrubber(raw)
	if err := checkURL(raw); err != nil {
		return nil, sc, fmt.Errorf("connection_url %w", err)
	}
	c, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, sc, errors.New("connection_url is not a valid PostgreSQL URL")
	}
	params := c.RuntimeParams
	if params["application_name"] == "" {
		params["application_name"] = "sluice"
	}
	params["datestyle"] = "ISO, YMD"
	params["intervalstyle"] = "postgres"
	if params["timezone"] == "" {
		params["timezone"] = "UTC"
	}
	conn, err := pgx.ConnectConfig(ctx, c)
	if err != nil {
		return nil, sc, sc.wrap(fmt.Errorf("connect to %s: %w", redactedTarget(c), err))
	}
	return conn, sc, nil
}

func redactedTarget(c *pgx.ConnConfig) string {
	return fmt.Sprintf("%s:%d/%s", c.Host, c.Port, c.Database)
}

// scrubber removes the URL's password from error text. Drivers do not put it in their
// messages, but a server message may quote a connection string back.
type scrubber struct{ secrets []string }

func newScrubber(raw string) *scrubber {
	s := &scrubber{}
	if c, err := pgconn.ParseConfig(raw); err == nil && c.Password != "" {
		s.secrets = append(s.secrets, c.Password)
	}
	return s
}

func (s *scrubber) wrap(err error) error {
	if err == nil || s == nil || len(s.secrets) == 0 {
		return err
	}
	msg := err.Error()
	clean := msg
	for _, p := range s.secrets {
		clean = strings.ReplaceAll(clean, p, "REDACTED")
	}
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// describe renders a database error with the parts PostgreSQL adds to its message: the
// detail, the hint and where it happened (for COPY: the line and column).
func describe(err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err.Error()
	}
	msg := err.Error()
	for _, extra := range []string{pe.Detail, pe.Hint, pe.Where} {
		if extra != "" {
			msg += "; " + extra
		}
	}
	return msg
}

// pgErr wraps err with describe's text, keeping it for errors.Is/As.
func pgErr(format string, err error) error {
	return &scrubbed{msg: fmt.Sprintf(format, describe(err)), err: err}
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
