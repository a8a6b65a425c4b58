package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/domain/run"
)

// leaderBeat is how often a term's leaders row records its heartbeat (SPEC §9.3); the
// term row itself is renewed at every Heartbeat.
const leaderBeat = 15 * time.Second

var _ scheduling.Elector = (*Elector)(nil)

// Elector is the scheduler leadership of one history (SPEC §9.3).
//
//   - single (a server holding the history's exclusive lock, or memory): every campaign
//     wins, since no other server can share the history;
//   - SQLite shared by clustered members: an OS lock on PATH.scheduler.lock; a stopped
//     (SIGSTOP) holder keeps it, and so blocks a takeover, until it dies;
//   - PostgreSQL clustered: a session advisory lock on a dedicated connection with TCP
//     keepalives below the TTL, plus the term row's heartbeat, which lets a standby
//     terminate a holder that stopped renewing.
//
// Every won campaign bumps the term row's epoch and records a leaders row.
type Elector struct {
	s      *Store
	shared bool

	mu      sync.Mutex
	standby *pgSession // a standby's open lock session, kept between campaigns
}

// Elector returns the leadership of this history; shared is --cluster.
func (s *Store) Elector(shared bool) *Elector { return &Elector{s: s, shared: shared} }

// Campaign tries once to lead; see scheduling.Elector.
func (e *Elector) Campaign(ctx context.Context, c scheduling.Candidate) (scheduling.Lease, error) {
	switch {
	case !e.shared || e.s.memory:
		l, err := e.s.takeTerm(ctx, c, nil)
		if err != nil {
			return nil, err // a nil interface, never one holding a nil *lease
		}
		return l, nil
	case e.s.d.name == DialectSQLite:
		release, err := lockFile(e.s.path+".scheduler.lock", Holder{InstanceID: c.InstanceID, Host: c.Host, PID: c.PID})
		var locked *LockedError
		if errors.As(err, &locked) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		l, err := e.s.takeTerm(ctx, c, nil)
		if err != nil {
			release()
			return nil, err
		}
		l.release = release
		return l, nil
	}
	return e.pgCampaign(ctx, c)
}

// lease is one term; pg is its lock session on PostgreSQL, release its file lock on SQLite.
type lease struct {
	s       *Store
	epoch   int64
	pg      *pgSession
	release func()

	mu       sync.Mutex
	lastBeat time.Time // of the leaders row
	resigned bool
}

func (l *lease) Epoch() int64 { return l.epoch }

// Heartbeat renews the term row (on the lock's own connection on PostgreSQL, so a
// session that was replaced or terminated cannot renew) and, every 15 s, the leaders row.
func (l *lease) Heartbeat(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var (
		n   int64
		err error
	)
	if l.pg != nil {
		n, err = l.pg.exec(ctx, l.s.q(`UPDATE sluice_scheduler_term SET heartbeat_at = {now}
WHERE id = 1 AND epoch = ? AND backend_pid = pg_backend_pid()`), l.epoch)
	} else {
		var res sql.Result
		res, err = l.s.db.NewRaw(l.s.q("UPDATE sluice_scheduler_term SET heartbeat_at = {now} WHERE id = 1 AND epoch = ?"), l.epoch).Exec(ctx)
		if err == nil {
			n, _ = res.RowsAffected()
		}
	}
	if err != nil {
		return translate(fmt.Sprintf("renew scheduler term %d", l.epoch), err)
	}
	if n == 0 {
		return fmt.Errorf("scheduler term %d was taken over: %w", l.epoch, run.ErrLeaseLost)
	}
	if time.Since(l.lastBeat) >= leaderBeat {
		if _, err := l.s.db.NewRaw(l.s.q("UPDATE sluice_leaders SET heartbeat_at = {now} WHERE epoch = ?"), l.epoch).Exec(ctx); err != nil {
			return translate("record the leader heartbeat", err)
		}
		l.lastBeat = time.Now()
	}
	return nil
}

// Resign records the clean stop (of a term still current) and releases the lock.
func (l *lease) Resign(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.resigned {
		return nil
	}
	l.resigned = true
	// Only a term still current stops cleanly: a deposed leader learns of it late, and
	// its row keeps its last heartbeat and no stop time, as after a crash.
	_, err := l.s.db.NewRaw(l.s.q(`UPDATE sluice_leaders SET stopped_at = {now}, heartbeat_at = {now}
WHERE epoch = ? AND stopped_at IS NULL
  AND EXISTS (SELECT 1 FROM sluice_scheduler_term WHERE id = 1 AND epoch = ?)`), l.epoch, l.epoch).Exec(ctx)
	if l.pg != nil {
		l.pg.close(ctx, true)
	}
	if l.release != nil {
		l.release()
	}
	return translate("record the leader's clean stop", err)
}

// takeTerm bumps the term's epoch for c and records the leaders row, in one
// transaction (on the lock session when pg is set, so the term row names its backend).
func (s *Store) takeTerm(ctx context.Context, c scheduling.Candidate, pg *pgSession) (*lease, error) {
	var epoch int64
	body := func(ctx context.Context, tx bun.IDB, pid any) error {
		if err := tx.NewRaw(s.q(`INSERT INTO sluice_scheduler_term (id, epoch, instance_id, backend_pid, heartbeat_at)
VALUES (1, 1, ?, ?, {now})
ON CONFLICT (id) DO UPDATE SET epoch = sluice_scheduler_term.epoch + 1, instance_id = EXCLUDED.instance_id,
  backend_pid = EXCLUDED.backend_pid, heartbeat_at = EXCLUDED.heartbeat_at
RETURNING epoch`), c.InstanceID, pid).Scan(ctx, &epoch); err != nil {
			return err
		}
		_, err := tx.NewRaw(s.q(`INSERT INTO sluice_leaders (epoch, instance_id, host, pid, version, started_at, heartbeat_at)
VALUES (?, ?, ?, ?, ?, {now}, {now})`), epoch, c.InstanceID, c.Host, c.PID, c.Version).Exec(ctx)
		return err
	}
	var err error
	if pg != nil {
		err = pg.inTx(ctx, s, body)
	} else {
		err = s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error { return body(ctx, tx, nil) })
	}
	if err != nil {
		return nil, translate("take the scheduler term", err)
	}
	return &lease{s: s, epoch: epoch, pg: pg, lastBeat: time.Now()}, nil
}

// Leader is one row of the leaders table.
type Leader struct {
	Epoch       int64
	InstanceID  string
	Host        string
	PID         int
	Version     string
	StartedAt   time.Time
	HeartbeatAt time.Time
	StoppedAt   time.Time // zero: never stopped cleanly (still leading, or crashed)
}

// Leaders lists every scheduler term, newest first.
func (s *Store) Leaders(ctx context.Context) ([]Leader, error) {
	var rows []struct {
		Epoch       int64         `bun:"epoch"`
		InstanceID  string        `bun:"instance_id"`
		Host        string        `bun:"host"`
		PID         int           `bun:"pid"`
		Version     string        `bun:"version"`
		StartedAt   int64         `bun:"started_at"`
		HeartbeatAt int64         `bun:"heartbeat_at"`
		StoppedAt   sql.NullInt64 `bun:"stopped_at"`
	}
	if err := s.db.NewRaw(`SELECT epoch, instance_id, host, pid, version, started_at, heartbeat_at, stopped_at
FROM sluice_leaders ORDER BY epoch DESC`).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("list leaders", err)
	}
	out := make([]Leader, 0, len(rows))
	for _, r := range rows {
		out = append(out, Leader{Epoch: r.Epoch, InstanceID: r.InstanceID, Host: r.Host, PID: r.PID, Version: r.Version,
			StartedAt: fromMS(r.StartedAt), HeartbeatAt: fromMS(r.HeartbeatAt), StoppedAt: fromMS(r.StoppedAt.Int64)})
	}
	return out, nil
}
