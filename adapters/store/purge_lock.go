package store

import (
	"context"
	"errors"
	"time"
)

// purgeLock lets one store at a time purge a history: two purges would contend for the
// same rows (on PostgreSQL, one waiting on the other's row locks for a whole batch) and
// do the same work twice. It never waits: ok is false while another store holds it.
//
// PostgreSQL: a session advisory lock on a dedicated connection (it dies with the
// connection, so a crashed purger frees it). SQLite file: a non-blocking flock on
// PATH.purge.lock, which also excludes two stores of one process. Memory: one store per
// database, nothing to exclude.
func (s *Store) purgeLock(ctx context.Context) (release func(), ok bool, err error) {
	switch {
	case s.memory:
		return func() {}, true, nil
	case s.d.name == DialectSQLite:
		release, err := lockFile(s.path+".purge.lock", Holder{})
		if errors.Is(err, ErrLocked) {
			return nil, false, nil
		}
		return release, err == nil, err
	}
	key := s.lockKey("purge")
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock(?)", key).Scan(&ok); err != nil || !ok {
		_ = conn.Close()
		return nil, false, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = conn.ExecContext(ctx, "SELECT pg_advisory_unlock(?)", key)
		_ = conn.Close()
	}, true, nil
}
