package statepg

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/state"
)

var _ execute.StateStore = (*Store)(nil)

// Store is the sluice_state table of one database. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	secret string // the URL's password, kept out of error messages
	where  string // host:port/database, for messages
}

// Open connects to the database at url and creates the state table when missing.
func Open(ctx context.Context, url string) (*Store, error) {
	if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
		return nil, errors.New("state: connection_url must be a postgres:// or postgresql:// URL")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errors.New("state: connection_url is not a valid PostgreSQL URL")
	}
	cfg.MaxConns = 2
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "sluice-state"
	}
	s := &Store{secret: cfg.ConnConfig.Password,
		where: fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)}
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, s.wrap("connect", err)
	}
	if _, err := s.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS sluice_state (
	key        TEXT PRIMARY KEY,
	value      TEXT NOT NULL,
	format     INTEGER NOT NULL,
	updated_at BIGINT NOT NULL)`); err != nil {
		// Two processes creating the table at once can collide in the catalog; the
		// table is then there.
		if c := code(err); c != "23505" && c != "42P07" && c != "42710" {
			s.pool.Close()
			return nil, s.wrap("create table sluice_state", err)
		}
	}
	return s, nil
}

// Load returns the bookmark under key, or nil when there is none.
func (s *Store) Load(ctx context.Context, key string) (*state.Bookmark, error) {
	var raw string
	err := s.pool.QueryRow(ctx, "SELECT value FROM sluice_state WHERE key = $1", key).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.wrap("load "+key, err)
	}
	b, err := state.Decode([]byte(raw), "")
	if err != nil {
		return nil, fmt.Errorf("state %s: %w", key, err)
	}
	return &b, nil
}

// Save replaces the bookmark under key in one statement (format 2, the envelope).
func (s *Store) Save(ctx context.Context, key string, b state.Bookmark) error {
	data, err := state.Encode(b, state.FormatEnvelope)
	if err != nil {
		return fmt.Errorf("state %s: %w", key, err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO sluice_state (key, value, format, updated_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, format = EXCLUDED.format, updated_at = EXCLUDED.updated_at`,
		key, string(data), state.FormatEnvelope, time.Now().UnixMilli())
	if err != nil {
		return s.wrap("save "+key, err)
	}
	return nil
}

// Close releases the connections.
func (s *Store) Close() { s.pool.Close() }

func (s *Store) wrap(what string, err error) error {
	msg := err.Error()
	if s.secret != "" {
		msg = strings.ReplaceAll(msg, s.secret, "REDACTED")
	}
	return &stateError{msg: fmt.Sprintf("state database %s: %s: %s", s.where, what, msg), err: err}
}

type stateError struct {
	msg string
	err error
}

func (e *stateError) Error() string { return e.msg }
func (e *stateError) Unwrap() error { return e.err }

func code(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Stores opens one Store per connection_url and keeps it for every later run that names
// the same database, so a server running many pipelines holds one small pool per state
// database instead of one per run. It is safe for concurrent use.
type Stores struct {
	mu     sync.Mutex
	open   map[string]*Store
	closed bool
}

// NewStores returns an empty set of stores.
func NewStores() *Stores { return &Stores{open: map[string]*Store{}} }

// Open returns the store for a `state: {type: postgres}` block; it fits the cluster
// worker's OpenState hook and `sluice run`'s state opener.
func (s *Stores) Open(ctx context.Context, st pipeline.State) (execute.StateStore, error) {
	if st.Type != pipeline.StatePostgres {
		return nil, fmt.Errorf("state: type %q is not a postgres state", st.Type)
	}
	url, _ := st.Config["connection_url"].(string)
	if url == "" {
		return nil, errors.New("state: pipeline.state.config.connection_url is required when type is postgres")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("state: the postgres state stores are closed")
	}
	if st, ok := s.open[url]; ok {
		return st, nil
	}
	store, err := Open(ctx, url)
	if err != nil {
		return nil, err
	}
	s.open[url] = store
	return store, nil
}

// Close closes every store opened so far; later Opens fail.
func (s *Stores) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for url, st := range s.open {
		st.Close()
		delete(s.open, url)
	}
}
