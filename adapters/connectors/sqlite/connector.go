package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Type is the connector's type name.
const Type = "sqlite"

// Connector is the sqlite source and sink.
type Connector struct{}

// New returns the sqlite connector.
func New() *Connector { return &Connector{} }

// Spec declares the config keys of both roles.
func (*Connector) Spec() pipeline.Spec {
	return pipeline.Spec{
		Type:        Type,
		Roles:       pipeline.RoleBoth,
		Description: "A SQLite database file: a query as the source; a table as the sink (append, upsert, delete or overwrite).",
		Fields:      fields(),
		ExactlyOnce: true,
		Check:       check,
	}
}

func fields() []pipeline.FieldSpec {
	f := []pipeline.FieldSpec{
		{Name: "connection_url", Type: pipeline.FieldString, Required: true,
			Description: "The database file: sqlite:PATH, sqlite://PATH or a plain path; relative paths resolve against the config file's directory."},
	}
	f = append(f, pipeline.SourceQueryFields()...)
	f = append(f, pipeline.FieldSpec{Name: "table_name", Type: pipeline.FieldString, Role: pipeline.RoleSink, Required: true,
		Description: "Table written to; schema.table names a table of an attached database."},
		pipeline.FieldSpec{Name: "watermark_table", Type: pipeline.FieldString, Role: pipeline.RoleSink, Default: watermark.DefaultTable,
			Description: "Table holding the exactly-once watermarks (created when missing) in the same database."})
	return append(f, pipeline.SinkWriteFields()...)
}

func check(role pipeline.Role, c map[string]any, path string) pipeline.Errors {
	var errs pipeline.Errors
	if u, err := cfg.String(c, "connection_url", ""); err == nil && u != "" {
		if _, _, err := splitURL(u); err != nil {
			errs = append(errs, pipeline.FieldError{Path: pipeline.Join(path, "connection_url"), Message: err.Error()})
		}
	}
	if role != pipeline.RoleSink {
		return errs
	}
	errs = append(errs, pipeline.CheckWriteMode(c, path)...)
	// A missing key was reported by CheckWriteMode in the shared wording.
	if _, err := sinkOptionsOf(c); err != nil && err.key != pipeline.KeyKey {
		errs = append(errs, pipeline.FieldError{Path: pipeline.Join(path, err.key), Message: err.msg})
	}
	return errs
}

type optionError struct{ key, msg string }

func (e *optionError) Error() string { return "config key \"" + e.key + "\": " + e.msg }

type sinkOptions struct {
	table     tableName
	mode      pipeline.WriteMode
	key       []string
	create    bool
	watermark tableName
}

func sinkOptionsOf(c map[string]any) (sinkOptions, *optionError) {
	var o sinkOptions
	t, err := cfg.String(c, "table_name", "")
	if err != nil {
		return o, &optionError{"table_name", err.Error()}
	}
	if strings.TrimSpace(t) == "" {
		return o, &optionError{"table_name", "a table name is required"}
	}
	o.table = parseTable(t)
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
	wm, err := cfg.String(c, "watermark_table", watermark.DefaultTable)
	if err != nil {
		return o, &optionError{"watermark_table", err.Error()}
	}
	if strings.TrimSpace(wm) == "" {
		return o, &optionError{"watermark_table", "must name a table"}
	}
	o.watermark = parseTable(wm)
	if o.watermark.schema == "" {
		o.watermark.schema = o.table.schema
	}
	return o, nil
}

// splitURL takes the database path and driver parameters out of a connection_url.
func splitURL(raw string) (path, params string, err error) {
	p := raw
	switch {
	case strings.HasPrefix(p, "sqlite://"):
		p = strings.TrimPrefix(p, "sqlite://")
	case strings.HasPrefix(p, "sqlite:"):
		p = strings.TrimPrefix(p, "sqlite:")
	case strings.Contains(p, "://"):
		return "", "", fmt.Errorf("connection_url must be sqlite:PATH, sqlite://PATH or a file path")
	}
	p, params, _ = strings.Cut(p, "?")
	if p == "" || p == ":memory:" || strings.HasPrefix(p, "file:") {
		return "", "", fmt.Errorf("connection_url must name a database file (sqlite:PATH)")
	}
	return p, params, nil
}

// dsn builds the driver's data source name for the file at path.
func dsn(path, params string, sink bool) string {
	q := "_pragma=busy_timeout(5000)"
	if sink {
		q += "&_pragma=journal_mode(WAL)&_txlock=immediate"
	} else {
		q += "&_pragma=query_only(1)"
	}
	if params != "" {
		q += "&" + params
	}
	return path + "?" + q
}

func resolve(base, p string) string {
	if filepath.IsAbs(p) || base == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// tableName is an optionally schema-qualified table.
type tableName struct{ schema, name string }

func parseTable(s string) tableName {
	if schema, name, ok := strings.Cut(s, "."); ok && schema != "" && name != "" {
		return tableName{schema: schema, name: name}
	}
	return tableName{name: s}
}

func (t tableName) String() string {
	if t.schema != "" {
		return t.schema + "." + t.name
	}
	return t.name
}

func (t tableName) quoted() string {
	if t.schema != "" {
		return quote(t.schema) + "." + quote(t.name)
	}
	return quote(t.name)
}

// quote makes s an SQL identifier, whatever it contains.
func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
