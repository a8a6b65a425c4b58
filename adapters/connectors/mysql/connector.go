package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlsink"
	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/application/execute"
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
	return sqlspec.Spec(Type, "A MySQL or MariaDB database: a query as the source (streamed); a table as the sink "+
		"(append, upsert, delete or overwrite; exactly-once with a watermark row).",
		fields(), check)
}

func fields() []pipeline.FieldSpec {
	return sqlspec.Fields(sqlspec.Descriptions{
		URL:       "mysql://user:password@host:port/database; other parameters are passed to the driver (e.g. tls=true).",
		Table:     "Table written to, optionally database.table.",
		Watermark: "Table holding the exactly-once watermarks (created when missing); in table_name's database unless qualified.",
	})
}

func check(role pipeline.Role, c map[string]any, path string) pipeline.Errors {
	return sqlspec.Check(role, c, path,
		func(u string) error { _, err := parseURL(u); return err },
		func(c map[string]any) *sqlspec.OptionError { _, err := sinkOptionsOf(c); return err })
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
// and the fence share it. A confined Reach dials (SPEC §14.1), judging every address
// the host resolves to.
func open(ctx context.Context, r execute.Reach, raw string, cfg map[string]any) (*sql.DB, *scrubber, error) {
	p, err := policy(cfg)
	if err != nil {
		return nil, sqlspec.NewScrubber(), err
	}
	c, err := parseURL(raw)
	if err != nil {
		return nil, sqlspec.NewScrubber(), fmt.Errorf("connection_url %w", err)
	}
	if reach := execute.ReachOf(r); execute.Confined(reach) {
		c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return reach.Dial(ctx, "connection_url", network, addr)
		}
	}
	sc := sqlspec.NewScrubber(c.Passwd)
	conn, err := mysql.NewConnector(c)
	if err != nil {
		return nil, sc, sc.Wrap(fmt.Errorf("connection_url: %w", err))
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	// A server that is restarting or briefly unreachable is tried again (the retry block).
	if err := retry.Do(ctx, p, func(ctx context.Context) error { return transient(db.PingContext(ctx)) }); err != nil {
		db.Close()
		return nil, sc, sc.Wrap(fmt.Errorf("connect to %s/%s: %w", c.Addr, c.DBName, err))
	}
	return db, sc, nil
}

// scrubber removes the URL's password from error text.
type scrubber = sqlspec.Scrubber

func errNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
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
	if o.table, oerr = sqlspec.Table(c, "table_name", "", parseTable); oerr != nil {
		return o, oerr
	}
	w, oerr := sqlspec.WriteOf(c)
	if oerr != nil {
		return o, oerr
	}
	o.mode, o.key, o.create = w.Mode, w.Key, w.Create
	if o.watermark, oerr = sqlspec.Table(c, "watermark_table", watermark.DefaultTable, parseTable); oerr != nil {
		return o, oerr
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

func (t tableName) String() string { return sqlspec.Qualified(t.schema, t.name, nil) }

func (t tableName) quoted() string { return sqlspec.Qualified(t.schema, t.name, quote) }

// quote makes s an identifier; backticks work in MySQL and MariaDB whatever sql_mode.
func quote(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

func quoteAll(cols []string) string {
	return sqlsink.QuoteAll(dialect{}, cols)
}

// Targets lists the host of connection_url, for the submit-time confinement check
// (SPEC §14.1).
func (*Connector) Targets(_ pipeline.Role, c map[string]any) []execute.Target {
	raw, _ := c["connection_url"].(string)
	mc, err := parseURL(raw)
	if err != nil {
		return nil
	}
	host, portText, err := net.SplitHostPort(mc.Addr)
	if err != nil {
		return nil
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil
	}
	return []execute.Target{{Key: "connection_url", Host: host, Port: uint16(port)}}
}
