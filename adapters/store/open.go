package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/sqliteshim"
	"github.com/uptrace/bun/schema"

	"github.com/sluicehq/sluice/application/runs"
)

// Dialect names, as Dialect reports them.
const (
	DialectPostgres = "postgres"
	DialectSQLite   = "sqlite"
)

// Options tune Open.
type Options struct {
	// Schema is the PostgreSQL schema holding the history; it is created when missing and
	// every connection's search_path points at it. Empty means the URL's search_path when
	// that names one schema, else "public". Advisory-lock keys and NOTIFY channels are
	// derived from it, so histories in different schemas never disturb each other.
	// Ignored for SQLite.
	Schema string
	// QueryHook observes every statement (tests count statements with it).
	QueryHook bun.QueryHook
	// Logger receives migration and lock messages; nil discards them.
	Logger *slog.Logger
	// Callbacks builds the callback of a run that HandBack ends cancelled (its port
	// method takes no builder); nil writes no outbox row there.
	Callbacks runs.CallbackBuilder
	// PollOnly turns off NOTIFY wake-ups on PostgreSQL (connection poolers drop them).
	PollOnly bool
	// SimpleProtocol keeps every PostgreSQL statement to the simple protocol: no
	// server-side prepared statements, which a pooler in transaction mode cannot follow
	// from one server connection to the next (--poll-only). See prepared.go.
	SimpleProtocol bool
	// IdleTxTimeout makes PostgreSQL end a session whose transaction has been left idle
	// this long (idle_in_transaction_session_timeout), releasing its locks. A member
	// frozen mid-transaction (SIGSTOP, a GC pause, a VM freeze) would otherwise hold the
	// row and pipeline-key locks of a run until it wakes, and every peer's reclaim of that
	// run would time out waiting for them, however long its lease has expired. Serve
	// passes a third of the lease TTL, so the locks go before the leases can expire.
	// 0 = no limit. Ignored for SQLite, where a frozen writer holds the file lock.
	IdleTxTimeout time.Duration
	// Slots is how many runs the process executes at once (--max-concurrent-runs): the
	// PostgreSQL pool gets room for each to finish while the loops and requests still find
	// a connection. 0 leaves the pool at its base size.
	Slots int
}

// Store is the run history.
type Store struct {
	db     *bun.DB
	d      dialect
	schema string // PostgreSQL schema; "" for SQLite
	path   string // SQLite file; "" for PostgreSQL and memory
	memory bool
	log    *slog.Logger
	redact func(string) string
	notify *notifier
	// callbacks is Options.Callbacks.
	callbacks runs.CallbackBuilder
	// pgcfg is the parsed PostgreSQL URL (search_path set), for the dedicated
	// connections of leadership; nil for SQLite.
	pgcfg   *pgx.ConnConfig
	migrate sync.Mutex // serialises Migrate calls inside this process
	// prepare sends the hottest statements as prepared statements (PostgreSQL without
	// Options.SimpleProtocol); hook is Options.QueryHook, which sees those too.
	prepare bool
	hook    bun.QueryHook
}

// Pool sizes. PostgreSQL: the loops of one member plus requests; the exclusive lock and
// each Migrate hold one connection of it. SQLite: WAL readers run side by side while
// writers take turns (writeGate in this process, busy_timeout against others), so a few
// connections are plenty.
const (
	pgConns      = 16
	pgConnsSpare = 8 // beyond one per slot: loops and requests
	sqliteConns  = 8
)

var schemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Open connects to the history named by url: "memory", "sqlite:PATH", "sqlite://PATH",
// "postgres://…" or "postgresql://…". It does not migrate; call Migrate or CheckSchema.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	redact := redactor(url)
	var (
		s   *Store
		err error
	)
	switch {
	case url == "memory":
		s, err = openMemory()
	case strings.HasPrefix(url, "sqlite://"):
		s, err = openSQLiteFile(strings.TrimPrefix(url, "sqlite://"))
	case strings.HasPrefix(url, "sqlite:"):
		s, err = openSQLiteFile(strings.TrimPrefix(url, "sqlite:"))
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		s, err = openPostgres(url, opts, redact)
	default:
		return nil, fmt.Errorf("--history %q is not a history URL: use memory, sqlite:PATH, sqlite://PATH, postgres://… or postgresql://…",
			shorten(redact(url)))
	}
	if err != nil {
		return nil, errors.New(redact(err.Error()))
	}
	s.log, s.redact, s.callbacks = log, redact, opts.Callbacks
	if opts.QueryHook != nil {
		s.db.AddQueryHook(opts.QueryHook)
		s.hook = opts.QueryHook
	}
	s.prepare = s.d.name == DialectPostgres && !opts.SimpleProtocol
	if s.d.name == DialectPostgres && !opts.PollOnly {
		s.notify = newNotifier(s)
	}
	if err := s.db.PingContext(ctx); err != nil {
		_ = s.db.Close()
		return nil, fmt.Errorf("--history: the database does not answer: %s", redact(err.Error()))
	}
	if s.d.name == DialectPostgres {
		if err := s.ensureSchema(ctx); err != nil {
			_ = s.db.Close()
			return nil, err
		}
	}
	return s, nil
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func openMemory() (*Store, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("memory history: %w", err)
	}
	// A uniquely named shared-cache database lives as long as one connection to it is
	// open. One connection serialises every statement, which is what an in-memory SQLite
	// needs: shared-cache table locks do not honour busy_timeout.
	dsn := "file:sluice-mem-" + hex.EncodeToString(b[:]) +
		"?mode=memory&cache=shared&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate"
	sqldb, err := sql.Open(sqliteshim.ShimName, dsn)
	if err != nil {
		return nil, fmt.Errorf("memory history: %w", err)
	}
	sqldb.SetMaxOpenConns(1)
	sqldb.SetMaxIdleConns(1)
	sqldb.SetConnMaxLifetime(0)
	sqldb.SetConnMaxIdleTime(0)
	return &Store{db: newBun(sqldb, sqlitedialect.New()), d: sqliteDialect(), memory: true}, nil
}

// sqliteBusyTimeout is how long a write waits for another process's writer (busy_timeout).
const sqliteBusyTimeout = 5 * time.Second

func openSQLiteFile(path string) (*Store, error) {
	return openSQLite(path, sqliteBusyTimeout, gateWait)
}

// openSQLite opens a SQLite file history whose writers wait busy for other processes'
// writers and wait for their turn in this one.
func openSQLite(path string, busy, wait time.Duration) (*Store, error) {
	if path == "" {
		return nil, errors.New("--history sqlite: needs a file path, e.g. sqlite:./.sluice/history.db")
	}
	if dir := filepath.Dir(path); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("--history sqlite:%s: directory %s does not exist (create it, or use another path)", path, dir)
		}
	}
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	dsn := "file:" + esc.Replace(path) +
		"?_pragma=busy_timeout(" + strconv.FormatInt(busy.Milliseconds(), 10) + ")&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	shim, err := sql.Open(sqliteshim.ShimName, dsn)
	if err != nil {
		return nil, fmt.Errorf("--history sqlite:%s: %w", path, err)
	}
	drv := shim.Driver()
	_ = shim.Close() // it never connected: only its driver is wanted
	sqldb := sql.OpenDB(&gatedConnector{drv: drv, dsn: dsn, gate: newWriteGate(wait)})
	sqldb.SetMaxOpenConns(sqliteConns)
	return &Store{db: newBun(sqldb, sqlitedialect.New()), d: sqliteDialect(), path: path}, nil
}

// pgPoolSize is the PostgreSQL pool for slots runs executing at once: the base size, or
// one connection per slot plus room for the claim, lease, outbox and purge loops and the
// API's requests. A short run's finish transaction is most of its life, so with fewer,
// slots wait for connections at exactly the moment many runs end together.
func pgPoolSize(slots int) int {
	return max(pgConns, slots+pgConnsSpare)
}

func openPostgres(url string, opts Options, redact func(string) string) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("--history: cannot parse the PostgreSQL URL: %s", redact(err.Error()))
	}
	if opts.IdleTxTimeout > 0 {
		cfg.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(max(opts.IdleTxTimeout.Milliseconds(), 1), 10)
	}
	conns := pgPoolSize(opts.Slots)
	schema := opts.Schema
	if schema == "" {
		schema = "public"
		if sp := strings.TrimSpace(cfg.RuntimeParams["search_path"]); sp != "" {
			schema = strings.Trim(sp, `"`)
		}
	}
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("--history: schema %q must be one identifier of letters, digits and underscores (set search_path in the URL)", schema)
	}
	cfg.RuntimeParams["search_path"] = `"` + schema + `"`
	// bun interpolates every argument into the statement text, so a prepared-statement
	// cache would only fill up with one-off statements: the simple protocol is one round
	// trip per statement. The few statements worth preparing ask for it (prepared.go).
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	var connOpts []stdlib.OptionOpenDB
	if !opts.SimpleProtocol {
		connOpts = append(connOpts, stdlib.OptionAfterConnect(useGenericPlans))
	}
	sqldb := stdlib.OpenDB(*cfg, connOpts...)
	sqldb.SetMaxOpenConns(conns)
	sqldb.SetMaxIdleConns(conns)
	return &Store{db: newBun(sqldb, pgdialect.New()), d: pgDialect(), schema: schema, pgcfg: cfg.Copy()}, nil
}

// useGenericPlans makes a new connection run prepared statements on their generic plan
// from the first call. Those few statements are sent with real parameters so that
// PostgreSQL plans them once per connection; left to choose (plan_cache_mode auto), it
// kept planning the finish of a batch afresh on every call — a sixth of its CPU in a
// burn-down — because its generic plan is costed for arrays of unknown length. The
// generic plans are the ones TestGenericPlansOfTheHotStatements checks. It is a SET after
// connecting, not a startup parameter: PostgreSQL before 12 has no such setting (undefined
// object, 42704) and plans as it always did, where a startup parameter would refuse the
// connection. A pooler (SimpleProtocol) is not asked at all.
func useGenericPlans(ctx context.Context, conn *pgx.Conn) error {
	return setIfKnown(ctx, conn, "SET plan_cache_mode = force_generic_plan")
}

// setIfKnown runs a SET statement; a setting this server does not have is no error.
func setIfKnown(ctx context.Context, conn *pgx.Conn, set string) error {
	_, err := conn.Exec(ctx, set)
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == "42704" {
		return nil
	}
	return err
}

// newBun wraps sqldb; unknown columns are discarded so a binary keeps reading a history
// that a later migration widened.
func newBun(sqldb *sql.DB, d schema.Dialect) *bun.DB {
	return bun.NewDB(sqldb, d, bun.WithDiscardUnknownColumns())
}

// ensureSchema creates the PostgreSQL schema when it is missing. Two servers starting at
// once may race on it; the loser sees the schema exist and carries on.
func (s *Store) ensureSchema(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS "`+s.schema+`"`)
	if err == nil {
		return nil
	}
	var exists bool
	if qerr := s.db.QueryRowContext(ctx,
		"SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ?)", s.schema).Scan(&exists); qerr == nil && exists {
		return nil
	}
	return fmt.Errorf("--history: cannot create schema %q: %s", s.schema, s.redact(err.Error()))
}

// Close stops background notifications and closes the connections.
func (s *Store) Close() error {
	if s.notify != nil {
		s.notify.stop()
	}
	return s.db.Close()
}

// Dialect is "postgres" or "sqlite".
func (s *Store) Dialect() string { return s.d.name }

// Schema is the PostgreSQL schema of the history ("" for SQLite).
func (s *Store) Schema() string { return s.schema }

// DB is the underlying connection pool, for tests and tools that inspect the history
// directly; application code goes through the ports.
func (s *Store) DB() *bun.DB { return s.db }
