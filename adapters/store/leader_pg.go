package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/sluicehq/sluice/application/scheduling"
)

// takeoverWait bounds how long a standby waits for a terminated holder's lock to go.
const takeoverWait = 2 * time.Second

// pgSession is a dedicated connection holding (or trying for) the scheduler's advisory
// lock. Its TCP keepalives, on both ends, notice a dead peer within about half the TTL,
// so the server frees the lock of a vanished leader before a standby would depose it.
type pgSession struct {
	db   *bun.DB
	conn bun.Conn
}

func (s *Store) openSession(ctx context.Context, ttl time.Duration) (*pgSession, error) {
	cfg := s.pgcfg.Copy()
	idle := max(ttl/4, time.Second)
	interval := max(ttl/8, time.Second)
	d := &net.Dialer{KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: idle, Interval: interval, Count: 2}}
	cfg.DialFunc = d.DialContext
	secs := func(t time.Duration) string { return strconv.Itoa(max(int(t/time.Second), 1)) }
	cfg.RuntimeParams["application_name"] = "sluice-scheduler"
	// The server's side of the same connection: it must drop a silent leader's session
	// (and with it the lock) within the TTL too.
	cfg.RuntimeParams["tcp_keepalives_idle"] = secs(idle)
	cfg.RuntimeParams["tcp_keepalives_interval"] = secs(interval)
	cfg.RuntimeParams["tcp_keepalives_count"] = "2"
	cfg.RuntimeParams["tcp_user_timeout"] = strconv.Itoa(int(ttl / 2 / time.Millisecond))
	sqldb := stdlib.OpenDB(*cfg)
	sqldb.SetMaxOpenConns(1)
	db := newBun(sqldb, pgdialect.New())
	conn, err := db.Conn(ctx)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &pgSession{db: db, conn: conn}, nil
}

func (p *pgSession) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := p.conn.NewRaw(query, args...).Exec(ctx)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (p *pgSession) inTx(ctx context.Context, s *Store, fn func(ctx context.Context, tx bun.IDB, pid any) error) error {
	return p.conn.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var pid int
		if err := tx.NewRaw("SELECT pg_backend_pid()").Scan(ctx, &pid); err != nil {
			return err
		}
		return fn(ctx, tx, pid)
	})
}

// close ends the session; the server releases its advisory locks with it. unlock
// releases the lock first, which is quicker when the connection is healthy.
func (p *pgSession) close(ctx context.Context, unlock bool) {
	if unlock {
		_, _ = p.conn.ExecContext(ctx, "SELECT pg_advisory_unlock_all()")
	}
	_ = p.conn.Close()
	_ = p.db.Close()
}

// pgCampaign tries the advisory lock on the standby's session; when another holds it and
// the term's heartbeat is older than the TTL, it terminates the holder's backend and
// tries again. Winning bumps the epoch on that same session.
func (e *Elector) pgCampaign(ctx context.Context, c scheduling.Candidate) (scheduling.Lease, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.standby == nil {
		sess, err := e.s.openSession(ctx, c.TTL)
		if err != nil {
			return nil, translate("open the scheduler's lock session", err)
		}
		e.standby = sess
	}
	sess := e.standby
	got, err := e.tryLock(ctx, sess)
	if err == nil && !got {
		var deposed bool
		if deposed, err = e.deposeStale(ctx, c); err == nil && deposed {
			got, err = e.waitLock(ctx, sess)
		}
	}
	if err != nil {
		sess.close(ctx, false)
		e.standby = nil
		return nil, translate("campaign for the scheduler", err)
	}
	if !got {
		return nil, nil
	}
	e.standby = nil // the session now belongs to the lease
	l, err := e.s.takeTerm(ctx, c, sess)
	if err != nil {
		sess.close(ctx, true)
		return nil, err
	}
	return l, nil
}

func (e *Elector) tryLock(ctx context.Context, sess *pgSession) (bool, error) {
	var ok bool
	err := sess.conn.NewRaw("SELECT pg_try_advisory_lock(?)", e.s.lockKey("scheduler")).Scan(ctx, &ok)
	return ok, err
}

// waitLock retries the lock while a terminated holder's session goes away.
func (e *Elector) waitLock(ctx context.Context, sess *pgSession) (bool, error) {
	deadline := time.Now().Add(takeoverWait)
	for {
		ok, err := e.tryLock(ctx, sess)
		if err != nil || ok || time.Now().After(deadline) {
			return ok, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// deposeStale terminates the backend named by the term row when its heartbeat is older
// than the TTL: the holder stopped renewing (paused, partitioned) but its session lives.
func (e *Elector) deposeStale(ctx context.Context, c scheduling.Candidate) (bool, error) {
	var rows []struct {
		InstanceID string        `bun:"instance_id"`
		PID        sql.NullInt64 `bun:"backend_pid"`
		AgeMS      int64         `bun:"age_ms"`
		Epoch      int64         `bun:"epoch"`
	}
	err := e.s.db.NewRaw(e.s.q(`SELECT instance_id, backend_pid, {now} - heartbeat_at AS age_ms, epoch
FROM sluice_scheduler_term WHERE id = 1`)).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	if len(rows) == 0 || !rows[0].PID.Valid || time.Duration(rows[0].AgeMS)*time.Millisecond <= c.TTL {
		return false, nil
	}
	t := rows[0]
	var done bool
	if err := e.s.db.NewRaw("SELECT pg_terminate_backend(?)", t.PID.Int64).Scan(ctx, &done); err != nil {
		return false, fmt.Errorf("terminate the stale scheduler leader %s (backend %d): %w", t.InstanceID, t.PID.Int64, err)
	}
	e.s.log.Warn("deposed a scheduler leader whose heartbeat is stale", "instance_id", t.InstanceID,
		"epoch", t.Epoch, "heartbeat_age", (time.Duration(t.AgeMS) * time.Millisecond).String(), "backend_pid", t.PID.Int64,
		"terminated", done)
	return true, nil
}
