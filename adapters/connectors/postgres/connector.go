package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	domainreach "github.com/sluicehq/sluice/domain/reach"
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
	return sqlspec.Spec(Type, "A PostgreSQL database: a query as the source (streamed); a table as the sink "+
		"(COPY append, upsert, delete or overwrite; exactly-once with a watermark row).",
		fields(), check)
}

func fields() []pipeline.FieldSpec {
	return sqlspec.Fields(sqlspec.Descriptions{
		URL:       "postgres://user:password@host:port/database?sslmode=…; other parameters (search_path, application_name) become session settings.",
		Table:     "Table written to, optionally schema.table; names are used exactly as written (case-sensitive).",
		Watermark: "Table holding the exactly-once watermarks (created when missing); in table_name's schema unless qualified.",
	},
		pipeline.FieldSpec{Name: "column_mapping", Type: pipeline.FieldString, Role: pipeline.RoleSink, Default: MapAuto,
			Enum:        []string{MapAuto, MapJSONB},
			Description: "auto_map writes each column into the table column of the same name; jsonb writes each row as one JSON object into jsonb_column (key columns also as columns)."},
		pipeline.FieldSpec{Name: "jsonb_column", Type: pipeline.FieldString, Role: pipeline.RoleSink, Default: "data",
			Description: "The jsonb column rows are written to with column_mapping: jsonb."},
	)
}

func check(role pipeline.Role, c map[string]any, path string) pipeline.Errors {
	return sqlspec.Check(role, c, path, checkURL,
		func(c map[string]any) *sqlspec.OptionError { _, err := sinkOptionsOf(c); return err })
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

type sinkOptions struct {
	table     tableName
	mode      pipeline.WriteMode
	key       []string
	create    bool
	jsonb     bool
	jsonCol   string
	watermark tableName
}

func sinkOptionsOf(c map[string]any) (sinkOptions, *sqlspec.OptionError) {
	var o sinkOptions
	var oerr *sqlspec.OptionError
	if o.table, oerr = sqlspec.Table(c, "table_name", "", parseTable); oerr != nil {
		return o, oerr
	}
	w, oerr := sqlspec.WriteOf(c)
	if oerr != nil {
		return o, oerr
	}
	o.mode, o.key, o.create = w.Mode, w.Key, w.Create
	mapping, oerr := sqlspec.String(c, "column_mapping", MapAuto)
	if oerr != nil {
		return o, oerr
	}
	switch mapping {
	case MapAuto:
	case MapJSONB:
		o.jsonb = true
	default:
		return o, &sqlspec.OptionError{Key: "column_mapping", Msg: fmt.Sprintf("unknown column_mapping %q; use auto_map or jsonb", mapping)}
	}
	if o.jsonCol, oerr = sqlspec.String(c, "jsonb_column", "data"); oerr != nil {
		return o, oerr
	}
	if o.jsonb && o.jsonCol == "" {
		return o, &sqlspec.OptionError{Key: "jsonb_column", Msg: "must name the jsonb column rows are written to"}
	}
	if o.jsonb && contains(o.key, o.jsonCol) {
		return o, &sqlspec.OptionError{Key: "jsonb_column", Msg: fmt.Sprintf("%q is also a key column; name another column", o.jsonCol)}
	}
	if o.watermark, oerr = sqlspec.Table(c, "watermark_table", watermark.DefaultTable, parseTable); oerr != nil {
		return o, oerr
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
//
// The connection goes through the confinement (SPEC §14.1): the database must not be
// the server's history (schemas are the sink's table schemas, beyond search_path), and
// a confined dial judges every address the host resolves to.
func connect(ctx context.Context, r execute.Reach, raw string, p retry.Policy, schemas ...string) (*pgx.Conn, *scrubber, error) {
	sc := newScrubber(raw)
	if err := checkURL(raw); err != nil {
		return nil, sc, fmt.Errorf("connection_url %w", err)
	}
	c, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil, sc, errors.New("connection_url is not a valid PostgreSQL URL")
	}
	reach := execute.ReachOf(r)
	target := domainreach.PostgresDatabase(c.Host, c.Port, c.Database, domainreach.SearchPath(c.RuntimeParams), schemas...)
	if err := reach.Database(ctx, "connection_url", target); err != nil {
		return nil, sc, err
	}
	if execute.Confined(reach) {
		// pgx resolves names itself and dials addresses; handing the name through makes
		// the Reach resolve it, so allow-host name patterns see the name.
		c.LookupFunc = func(_ context.Context, host string) ([]string, error) { return []string{host}, nil }
		c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return reach.Dial(ctx, "connection_url", network, addr)
		}
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
	// A server that is restarting or briefly unreachable is tried again (the retry block).
	var conn *pgx.Conn
	err = retry.Do(ctx, p, func(ctx context.Context) error {
		var err error
		conn, err = pgx.ConnectConfig(ctx, c)
		return transient(err)
	})
	if err != nil {
		return nil, sc, sc.Wrap(fmt.Errorf("connect to %s: %w", redactedTarget(c), err))
	}
	return conn, sc, nil
}

func redactedTarget(c *pgx.ConnConfig) string {
	return fmt.Sprintf("%s:%d/%s", c.Host, c.Port, c.Database)
}

// scrubber removes the URL's password from error text. Drivers do not put it in their
// messages, but a server message may quote a connection string back.
type scrubber = sqlspec.Scrubber

func newScrubber(raw string) *scrubber {
	if c, err := pgconn.ParseConfig(raw); err == nil {
		return sqlspec.NewScrubber(c.Password)
	}
	return sqlspec.NewScrubber()
}

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
	return sqlspec.Reword(fmt.Sprintf(format, describe(err)), err)
}

func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Targets lists the host and database of connection_url, for the submit-time
// confinement check (SPEC §14.1); a sink adds the schemas of its tables.
func (*Connector) Targets(role pipeline.Role, c map[string]any) []execute.Target {
	raw, _ := c["connection_url"].(string)
	if checkURL(raw) != nil {
		return nil
	}
	pc, err := pgx.ParseConfig(raw)
	if err != nil {
		return nil
	}
	var schemas []string
	if role == pipeline.RoleSink {
		if o, oerr := sinkOptionsOf(c); oerr == nil {
			schemas = []string{o.table.schema, o.watermark.schema}
		}
	}
	db := domainreach.PostgresDatabase(pc.Host, pc.Port, pc.Database, domainreach.SearchPath(pc.RuntimeParams), schemas...)
	return []execute.Target{{Key: "connection_url", Host: pc.Host, Port: pc.Port, Database: &db}}
}
