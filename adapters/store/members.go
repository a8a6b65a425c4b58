package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/cluster"
)

// MemberInfo is a membership row as read back: the heartbeat a member wrote, plus when
// it wrote it. Age is measured by the database clock, so liveness (Age within the lease
// TTL) does not depend on the reader's clock.
type MemberInfo struct {
	cluster.MemberRow
	HeartbeatAt time.Time
	StoppedAt   time.Time // zero while the member has not stopped cleanly
	Age         time.Duration
}

// Heartbeat upserts this member's row with heartbeat_at = the database clock. A nil
// Pools is stored as NULL: a member without pool support.
func (s *Store) Heartbeat(ctx context.Context, m cluster.MemberRow) error {
	var pools any
	if m.Pools != nil {
		b, err := json.Marshal(m.Pools)
		if err != nil {
			return fmt.Errorf("heartbeat: pools: %w", err)
		}
		pools = string(b)
	}
	started := m.StartedAt
	if started.IsZero() {
		started = time.Now()
	}
	_, err := s.db.NewRaw(s.q(`INSERT INTO sluice_members (instance_id, host, pid, listen, version, pools,
  max_concurrent, in_flight, state_format_max, vault_format_max, draining, started_at, heartbeat_at, stopped_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {now}, NULL)
ON CONFLICT (instance_id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid,
  listen = EXCLUDED.listen, version = EXCLUDED.version, pools = EXCLUDED.pools,
  max_concurrent = EXCLUDED.max_concurrent, in_flight = EXCLUDED.in_flight,
  state_format_max = EXCLUDED.state_format_max, vault_format_max = EXCLUDED.vault_format_max,
  draining = EXCLUDED.draining, heartbeat_at = EXCLUDED.heartbeat_at, stopped_at = NULL`),
		m.InstanceID, m.Host, m.PID, m.Listen, m.Version, pools, m.MaxConcurrent, m.InFlight,
		m.StateFormatMax, m.VaultFormatMax, m.Draining, started.UnixMilli()).Exec(ctx)
	return translate("heartbeat", err)
}

// MarkStopped records a clean stop of a member.
func (s *Store) MarkStopped(ctx context.Context, instanceID string) error {
	_, err := s.db.NewRaw(s.q("UPDATE sluice_members SET stopped_at = {now}, in_flight = 0 WHERE instance_id = ?"),
		instanceID).Exec(ctx)
	return translate("mark member stopped", err)
}

// Members returns every membership row, live or not, by instance id.
func (s *Store) Members(ctx context.Context) ([]MemberInfo, error) {
	var rows []struct {
		InstanceID     string  `bun:"instance_id"`
		Host           string  `bun:"host"`
		PID            int     `bun:"pid"`
		Listen         string  `bun:"listen"`
		Version        string  `bun:"version"`
		Pools          *string `bun:"pools"`
		MaxConcurrent  int     `bun:"max_concurrent"`
		InFlight       int     `bun:"in_flight"`
		StateFormatMax int     `bun:"state_format_max"`
		VaultFormatMax int     `bun:"vault_format_max"`
		Draining       bool    `bun:"draining"`
		StartedAt      int64   `bun:"started_at"`
		HeartbeatAt    int64   `bun:"heartbeat_at"`
		StoppedAt      int64   `bun:"stopped_at"`
		Age            int64   `bun:"age_ms"`
	}
	err := s.db.NewRaw(s.q(`SELECT instance_id, host, pid, listen, version, pools, max_concurrent, in_flight,
  state_format_max, vault_format_max, draining, started_at, heartbeat_at, stopped_at,
  {now} - heartbeat_at AS age_ms
FROM sluice_members ORDER BY instance_id`)).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("list members", err)
	}
	out := make([]MemberInfo, len(rows))
	for i, r := range rows {
		m := MemberInfo{
			MemberRow: cluster.MemberRow{
				InstanceID: r.InstanceID, Host: r.Host, PID: r.PID, Listen: r.Listen,
				Version: r.Version, MaxConcurrent: r.MaxConcurrent, InFlight: r.InFlight,
				StateFormatMax: r.StateFormatMax, VaultFormatMax: r.VaultFormatMax,
				Draining: r.Draining, StartedAt: fromMS(r.StartedAt),
			},
			HeartbeatAt: fromMS(r.HeartbeatAt),
			StoppedAt:   fromMS(r.StoppedAt),
			Age:         time.Duration(r.Age) * time.Millisecond,
		}
		if r.Pools != nil {
			m.Pools = []string{}
			if err := json.Unmarshal([]byte(*r.Pools), &m.Pools); err != nil {
				return nil, fmt.Errorf("member %s: stored pools are not a JSON array: %w", r.InstanceID, err)
			}
		}
		out[i] = m
	}
	return out, nil
}

// PendingByPool counts pending runs per pool; pools without any are absent.
func (s *Store) PendingByPool(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		Pool string `bun:"pool"`
		N    int    `bun:"n"`
	}
	err := s.db.NewRaw("SELECT pool, count(*) AS n FROM sluice_runs WHERE status = 'pending' GROUP BY pool").Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("count pending runs", err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Pool] = r.N
	}
	return out, nil
}

// CancelRequested returns which of ids have their cancel flag set.
func (s *Store) CancelRequested(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []string
	err := s.db.NewRaw("SELECT id FROM sluice_runs WHERE id IN (?) AND cancel_requested ORDER BY id", bun.In(ids)).Scan(ctx, &out)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("read cancel flags", err)
	}
	return out, nil
}

// Ping checks that the history answers a statement.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return translate("ping history", s.db.NewRaw("SELECT 1").Scan(ctx, &one))
}

// Now is the database clock, the one leases are measured by.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	var ms int64
	if err := s.db.NewRaw(s.q("SELECT {now}")).Scan(ctx, &ms); err != nil {
		return time.Time{}, translate("read the database clock", err)
	}
	return fromMS(ms), nil
}
