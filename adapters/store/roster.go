package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/domain/member"
)

// memberRow is a membership row as stored, with the database clock at the read.
type memberRow struct {
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
	HeartbeatAt    int64   `bun:"heartbeat_at"`
	StoppedAt      *int64  `bun:"stopped_at"`
	Now            int64   `bun:"now_ms"`
}

// member is the domain view of the row. A NULL pools column (a release without pool
// support) stays nil; an empty list stays empty.
func (r memberRow) member() (member.Member, error) {
	m := member.Member{
		InstanceID: r.InstanceID, Host: r.Host, PID: r.PID, Listen: r.Listen, Version: r.Version,
		MaxConcurrent: r.MaxConcurrent, InFlight: r.InFlight, StateFormatMax: r.StateFormatMax,
		VaultFormatMax: r.VaultFormatMax, Draining: r.Draining, HeartbeatAt: fromMS(r.HeartbeatAt),
	}
	if r.Pools != nil {
		m.Pools = []string{}
		if err := json.Unmarshal([]byte(*r.Pools), &m.Pools); err != nil {
			return member.Member{}, fmt.Errorf("member %s: stored pools are not a JSON array: %w", r.InstanceID, err)
		}
	}
	return m, nil
}

// memberRows reads every membership row (stopped ones too) with the database clock.
func (s *Store) memberRows(ctx context.Context, db bun.IDB) ([]memberRow, error) {
	var rows []memberRow
	err := db.NewRaw(s.q(`SELECT instance_id, host, pid, listen, version, pools, max_concurrent, in_flight,
  state_format_max, vault_format_max, draining, heartbeat_at, stopped_at, {now} AS now_ms
FROM sluice_members ORDER BY instance_id`)).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	return rows, nil
}

// Roster returns the rows of members that have not stopped cleanly, by instance id, and
// the database clock at the read (cluster.Roster, runs.Roster): heartbeats and now come
// from one clock, so liveness does not depend on the reader's.
func (s *Store) Roster(ctx context.Context) ([]member.Member, time.Time, error) {
	rows, err := s.memberRows(ctx, s.db)
	if err != nil {
		return nil, time.Time{}, translate("read the membership", err)
	}
	now, err := s.Now(ctx)
	if len(rows) > 0 {
		now, err = fromMS(rows[0].Now), nil
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	out := make([]member.Member, 0, len(rows))
	for _, r := range rows {
		if r.StoppedAt != nil {
			continue
		}
		m, err := r.member()
		if err != nil {
			return nil, time.Time{}, err
		}
		out = append(out, m)
	}
	return out, now, nil
}
