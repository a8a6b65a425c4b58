package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Type is the connector's type name.
const Type = "mysql"

// Connector is the mysql source and sink.
type Connector struct{}

// New returns the mysql connector.
func New() *Connector { return &Connector{} }

// Spec declares the config keys of both roles.
func (*Connector) Spec() pipeline.Spec {
	return pipeline.Spec{
		Type:  Type,
		Roles: pipeline.RoleBoth,
		Description: "A MySQL or MariaDB database: a query as the source (streamed); a table as the sink " +
			"(append, upsert, delete or overwrite; exactly-once with a watermark row).",
		Fields:      fields(),
		ExactlyOnce: true,
		Check:       check,
	}
}

func fields() []pipeline.FieldSpec {
	f := []pipeline.FieldSpec{
		{Name: "connection_url", Type: pipeline.FieldString, Required: true,
			Description: "mysql://user:password@host:port/database; other parameters are passed to the driver (e.g. tls=true)."},
	}
	f = append(f, pipeline.SourceQueryFields()...)
	f = append(f,
		pipeline.FieldSpec{Name: "table_name", Type: pipeline.FieldString, Role: pipeline.RoleSink, Required: true,
			Description: "Table written to, optionally database.table."},
		pipeline.FieldSpec{Name: "watermark_table", Type: pipeline.FieldString, Role: pipeline.RoleSink, Default: watermark.DefaultTable,
			Description: "Table holding the exactly-once watermarks (created when missing); in table_name's database unless qualified."},
	)
	return append(f, pipeline.SinkWriteFields()...)
}

func check(role pipeline.Role, c map[string]any, path string) pipeline.Errors {
	var errs pipeline.Errors
	if u, err := cfg.String(c, "connection_url", ""); err == nil && u != "" {
		if _, err := parseURL(u); err != nil {
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

// parseURL turns mysql://user:pass@host:port/db?params into the driver's config with the
// settings this connector relies on: times as time.Time in UTC (the session time zone
// too, so TIMESTAMP columns read and write in UTC), parameters interpolated into the
// statement text (one round trip per statement), matched rather than changed rows
// counted (a fenced UPDATE that changes nothing still matched), and strict mode (a value
// that does not fit a column is an error, not a silent 0). The value is never echoed.
func parseURL(raw string) (*mysql.Config, error) {
	if !strings.HasPrefix(raw, "mysql://") {
		return nil, errors.New("must be a mysql:// URL")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, errors.New("is not a valid mysql:// URL; check its host, port and parameters")
	}
	c, err := mysql.ParseDSN("/?" + u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("has a parameter the driver refuses: %w", redactParams(err))
	}
	if u.User != nil {
		c.User = u.User.Username()
		c.Passwd, _ = u.User.Password()
	}
	c.Net = "tcp"
	c.Addr = u.Host
	if u.Port() == "" {
		c.Addr += ":3306"
	}
	c.DBName = strings.TrimPrefix(u.Path, "/")
	c.ParseTime = true
	c.Loc = time.UTC
	c.InterpolateParams = true
	c.ClientFoundRows = true
	c.MultiStatements = false
	c.Logger = &mysql.NopLogger{}
	if c.Params == nil {
		c.Params = map[string]string{}
	}
	if _, ok := c.Params["time_zone"]; !ok {
		c.Params["time_zone"] = "'+00:00'"
	}
	if _, ok := c.Params["sql_mode"]; !ok {
		c.Params["sql_mode"] = "CONCAT_WS(',', NULLIF(@@sql_mode, ''), 'STRICT_ALL_TABLES')"
	}
	return c, nil
}

func redactParams(err error) error {
	return errors.New(strings.SplitN(err.Error(), "=", 2)[0])
}

// open connects with one connection: a source streams on it, a sink's transactions
// and the fence share it.
func open(ctx context.Context, raw string) (*sql.DB, *scrubber, error) {
	c, err := parseURL(raw)
	if err != nil {
		return nil, &scrubber{}, fmt.Errorf("connection_url %w", err)
	}
	sc := &scrubber{}
	if c.Passwd != "" {
		sc.secrets = append(sc.secrets, c.Passwd)
	}
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, sc, sc.wrap(fmt.Errorf("connection_url: %w", err))
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, sc, sc.wrap(fmt.Errorf("connect to %s/%s: %w", c.Addr, c.DBName, err))
	}
	return db, sc, nil
}

// scrubber removes the URL's password from error text.
type scrubber struct{ secrets []string }

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

func errNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
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

// tableName is an optionally database-qualified table.
type tableName struct{ schema, name string }

func parseTable(s string) (tableName, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return tableName{}, errors.New("a table name is required")
	}
	s = strings.ReplaceAll(s, "`", "")
	schema, name, ok := strings.Cut(s, ".")
	if !ok {
		return tableName{name: s}, nil
	}
	if schema == "" || name == "" || strings.Contains(name, ".") {
		return tableName{}, errors.New("must be table or database.table")
	}
	return tableName{schema: schema, name: name}, nil
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

// quote makes s an identifier; backticks work in MySQL and MariaDB whatever sql_mode.
func quote(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

func quoteAll(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quote(c)
	}
	return strings.Join(q, ", ")
}
