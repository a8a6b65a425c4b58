package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/application/execute"
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
	return sqlspec.Spec(Type, "A SQLite database file: a query as the source; a table as the sink (append, upsert, delete or overwrite).",
		fields(), check)
}

func fields() []pipeline.FieldSpec {
	return sqlspec.Fields(sqlspec.Descriptions{
		URL:       "The database file: sqlite:PATH, sqlite://PATH or a plain path; relative paths resolve against the config file's directory.",
		Table:     "Table written to; schema.table names a table of an attached database.",
		Watermark: "Table holding the exactly-once watermarks (created when missing) in the same database.",
	})
}

func check(role pipeline.Role, c map[string]any, path string) pipeline.Errors {
	return sqlspec.Check(role, c, path,
		func(u string) error { _, _, err := splitURL(u); return err },
		func(c map[string]any) *sqlspec.OptionError { _, err := sinkOptionsOf(c); return err })
}

type sinkOptions struct {
	table     tableName
	mode      pipeline.WriteMode
	key       []string
	create    bool
	watermark tableName
}

func sinkOptionsOf(c map[string]any) (sinkOptions, *sqlspec.OptionError) {
	var o sinkOptions
	var oerr *sqlspec.OptionError
	if o.table, oerr = sqlspec.Table(c, "table_name", "", named("a table name is required")); oerr != nil {
		return o, oerr
	}
	w, oerr := sqlspec.WriteOf(c)
	if oerr != nil {
		return o, oerr
	}
	o.mode, o.key, o.create = w.Mode, w.Key, w.Create
	if o.watermark, oerr = sqlspec.Table(c, "watermark_table", watermark.DefaultTable, named("must name a table")); oerr != nil {
		return o, oerr
	}
	if o.watermark.schema == "" {
		o.watermark.schema = o.table.schema
	}
	return o, nil
}

// named parses a table name, refusing a blank one with msg.
func named(msg string) func(string) (tableName, error) {
	return func(s string) (tableName, error) {
		if strings.TrimSpace(s) == "" {
			return tableName{}, errors.New(msg)
		}
		return parseTable(s), nil
	}
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

// dbPath is the real path of the database file: the confinement (SPEC §14.1) resolves
// it, so a served config cannot open the history or a file outside --allow-path.
func dbPath(ctx context.Context, r execute.Reach, base, p string) (string, error) {
	path, err := execute.ReachOf(r).Path(ctx, "connection_url", base, p)
	if err != nil {
		return "", fmt.Errorf("sqlite: %w", err)
	}
	return path, nil
}

// tableName is an optionally schema-qualified table.
type tableName struct{ schema, name string }

func parseTable(s string) tableName {
	if schema, name, ok := strings.Cut(s, "."); ok && schema != "" && name != "" {
		return tableName{schema: schema, name: name}
	}
	return tableName{name: s}
}

func (t tableName) String() string { return sqlspec.Qualified(t.schema, t.name, nil) }

func (t tableName) quoted() string { return sqlspec.Qualified(t.schema, t.name, quote) }

// quote makes s an SQL identifier, whatever it contains.
func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// Targets lists the database file, for the submit-time confinement check (SPEC §14.1).
func (*Connector) Targets(_ pipeline.Role, c map[string]any) []execute.Target {
	raw, _ := c["connection_url"].(string)
	p, _, err := splitURL(raw)
	if err != nil {
		return nil
	}
	return []execute.Target{{Key: "connection_url", Path: p}}
}
