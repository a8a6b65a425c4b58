package store

import (
	"context"
	"sync"
	"time"
)

// AcquireShared takes the history lock in shared mode for the life of a clustered member:
// any number of members share it, while a server without --cluster, which needs it
// exclusively, is refused (and refuses them). Without this, a single server started on
// a cluster's history would reclaim the runs the members are executing as if they were
// left by a dead predecessor. A server holding the lock exclusively is reported as a
// *LockedError naming it.
//
// PostgreSQL: the same session advisory key as AcquireExclusive, taken shared on a
// dedicated connection. SQLite file: a shared flock on PATH.lock. Memory: nothing.
func (s *Store) AcquireShared(ctx context.Context) (release func(), err error) {
	switch {
	case s.memory:
		return func() {}, nil
	case s.d.name == DialectSQLite:
		return sharedLockFile(s.path + ".lock")
	}
	key := s.lockKey("exclusive")
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, translate("shared history lock", err)
	}
	var ok bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock_shared(?)", key).Scan(&ok); err != nil {
		_ = conn.Close()
		return nil, translate("shared history lock", err)
	}
	if !ok {
		_ = conn.Close()
		var holder Holder
		_ = s.db.NewRaw("SELECT instance_id, host, pid FROM sluice_server_lock WHERE id = 1").
			Scan(ctx, &holder.InstanceID, &holder.Host, &holder.PID)
		return nil, &LockedError{Holder: holder}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, _ = conn.ExecContext(ctx, "SELECT pg_advisory_unlock_shared(?)", key)
			_ = conn.Close()
		})
	}, nil
}
