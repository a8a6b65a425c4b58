package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Holder names the server holding the exclusive lock of a history.
type Holder struct {
	InstanceID string `json:"instance_id"`
	Host       string `json:"host"`
	PID        int    `json:"pid"`
}

// ErrLocked is wrapped by LockedError.
var ErrLocked = errors.New("the history is locked by another sluice server")

// LockedError refuses a second non-clustered server on one history (SPEC §2.1).
type LockedError struct {
	Holder Holder // zero when the holder did not record itself
}

func (e *LockedError) Error() string {
	if e.Holder.InstanceID == "" {
		return "another sluice server holds the exclusive lock of this history (holder unknown): stop it, or give this server its own --history"
	}
	return fmt.Sprintf("another sluice server holds the exclusive lock of this history: instance %s on host %s, pid %d; stop it, or give this server its own --history",
		e.Holder.InstanceID, e.Holder.Host, e.Holder.PID)
}

// Unwrap makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Unwrap() error { return ErrLocked }

// AcquireExclusive takes the exclusive server lock of this history for the life of the
// process and records h as its holder; release gives it up (safe to call twice). When
// another server holds it, the error is a *LockedError naming that holder.
//
// PostgreSQL: a session advisory lock keyed by the schema, on a dedicated connection
// (the lock dies with the connection, so a crashed holder frees it), with the holder in
// sluice_server_lock (migration 0002: call after Migrate). SQLite file: an OS lock on
// PATH.lock, with the holder written into that file. Memory: nothing to share, no lock.
func (s *Store) AcquireExclusive(ctx context.Context, h Holder) (release func(), err error) {
	switch {
	case s.memory:
		return func() {}, nil
	case s.d.name == DialectSQLite:
		return lockFile(s.path+".lock", h)
	}
	return s.pgExclusive(ctx, h)
}

func (s *Store) pgExclusive(ctx context.Context, h Holder) (func(), error) {
	key := s.lockKey("exclusive")
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, translate("exclusive lock", err)
	}
	var ok bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock(?)", key).Scan(&ok); err != nil {
		_ = conn.Close()
		return nil, translate("exclusive lock", err)
	}
	if !ok {
		_ = conn.Close()
		var holder Holder
		// Best effort: a holder that has not recorded itself yet is reported as unknown.
		_ = s.db.NewRaw("SELECT instance_id, host, pid FROM sluice_server_lock WHERE id = 1").
			Scan(ctx, &holder.InstanceID, &holder.Host, &holder.PID)
		return nil, &LockedError{Holder: holder}
	}
	if _, err := conn.ExecContext(ctx, s.q(`INSERT INTO sluice_server_lock (id, instance_id, host, pid, acquired_at)
VALUES (1, ?, ?, ?, {now})
ON CONFLICT (id) DO UPDATE SET instance_id = EXCLUDED.instance_id, host = EXCLUDED.host,
  pid = EXCLUDED.pid, acquired_at = EXCLUDED.acquired_at`), h.InstanceID, h.Host, h.PID); err != nil {
		_ = conn.Close() // closing the session releases the advisory lock
		return nil, translate("record the exclusive lock holder", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, _ = conn.ExecContext(ctx, "DELETE FROM sluice_server_lock WHERE id = 1 AND instance_id = ?", h.InstanceID)
			_, _ = conn.ExecContext(ctx, "SELECT pg_advisory_unlock(?)", key)
			_ = conn.Close()
		})
	}, nil
}

// migrationLock serialises Migrate across processes sharing this history.
func (s *Store) migrationLock(ctx context.Context) (func(), error) {
	switch {
	case s.memory:
		return func() {}, nil
	case s.d.name == DialectSQLite:
		return waitFileLock(ctx, s.path+".migrate.lock")
	}
	key := s.lockKey("migrate")
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", key); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = conn.ExecContext(ctx, "SELECT pg_advisory_unlock(?)", key)
		_ = conn.Close()
	}, nil
}
