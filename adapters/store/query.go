package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// List page sizes (SPEC §2.3). The store allows one row more than the API's largest page:
// the run service asks for limit+1 to learn whether another page exists, and a store cap
// equal to the API's would hide the next page of every full 500-row page.
const (
	DefaultListLimit = 50
	MaxListLimit     = runs.MaxListLimit + 1
)

// Get returns the run with id, or run.ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*runs.Record, error) {
	rec, err := s.getRun(ctx, s.db, id, "")
	if err == nil {
		err = s.addShards(ctx, []*runs.Record{rec})
	}
	if err != nil {
		return nil, translate("get run "+id, err)
	}
	return rec, nil
}

// getRun reads one run through db (a transaction or the pool); suffix may lock the row.
func (s *Store) getRun(ctx context.Context, db bun.IDB, id, suffix string) (*runs.Record, error) {
	var row runRow
	err := db.NewRaw("SELECT "+runCols("")+" FROM sluice_runs WHERE id = ?"+suffix, id).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", id, run.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return row.record()
}

// List returns runs newest first (by id: UUIDv7 ids sort by creation). Filter.After is
// the id of the last run of the previous page. Limit defaults to 50 and is capped at MaxListLimit.
func (s *Store) List(ctx context.Context, f runs.Filter) ([]*runs.Record, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, a ...any) {
		where = append(where, cond)
		args = append(args, a...)
	}
	// One label (the common case) drives the list: its (key, value, run_id) index yields
	// the labelled runs newest first, so a page stops after LIMIT of them; the filters
	// below then name the runs' columns as r.*, and id bounds go on l.run_id where that
	// index can use them. Several labels keep labelFilter's one subquery.
	from, col, idCol := "sluice_runs", "", "id"
	if len(f.Labels) == 1 {
		from, col, idCol = "sluice_run_labels l JOIN sluice_runs r ON r.id = l.run_id", "r.", "l.run_id"
		for k, v := range f.Labels {
			add("l.key = ? AND l.value = ?", k, v)
		}
	}
	if len(f.Status) > 0 {
		add(col+"status IN (?)", bun.In(f.Status))
	}
	if f.Name != "" {
		add(col+"name = ?", f.Name)
	}
	if f.Pool != "" {
		add(col+"pool = ?", f.Pool)
	}
	if f.Tenant != "" || f.TenantSet {
		add(col+"tenant = ?", f.Tenant)
	}
	if f.RunKey != "" {
		add(col+"run_key = ?", f.RunKey)
	}
	if len(f.Labels) > 1 {
		cond, a := labelFilter(f.Labels)
		add(cond, a...)
	}
	// A time window is also an id range (runs.IDLead: a run's id time is its created_at,
	// or up to IDLead after it), so the list walks that range of the primary key instead
	// of filtering every newer run; created_at still decides, so the page is exact.
	if !f.Since.IsZero() {
		add(idCol+" >= ? AND "+col+"created_at >= ?", idFloor(f.Since.UnixMilli()), f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		add(idCol+" < ? AND "+col+"created_at < ?", idFloor(f.Until.UnixMilli()+runs.IDLead.Milliseconds()), f.Until.UnixMilli())
	}
	if f.After != "" {
		add(idCol+" < ?", f.After)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	limit = min(limit, MaxListLimit)
	q := "SELECT " + runCols(col) + " FROM " + from
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY " + idCol + " DESC LIMIT ?"
	args = append(args, limit)
	var rows []runRow
	if err := s.db.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("list runs", err)
	}
	out := make([]*runs.Record, 0, len(rows))
	for i := range rows {
		rec, err := rows[i].record()
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	if err := s.addShards(ctx, out); err != nil {
		return nil, translate("list runs", err)
	}
	return out, nil
}

// labelFilter is the condition "the run has every one of labels": ONE subquery that
// reads the matching label rows through their (key, value) index and keeps the runs that
// matched all of them. A correlated EXISTS per label made the planner join one more
// relation per filter — 150 filters took seconds to plan on PostgreSQL, and SQLite
// refused a few hundred as too deep an expression tree.
func labelFilter(labels map[string]string) (string, []any) {
	terms := make([]string, 0, len(labels))
	args := make([]any, 0, 2*len(labels)+1)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		terms = append(terms, "(l.key = ? AND l.value = ?)")
		args = append(args, k, labels[k])
	}
	args = append(args, len(labels))
	return `id IN (SELECT l.run_id FROM sluice_run_labels l WHERE ` + strings.Join(terms, " OR ") +
		` GROUP BY l.run_id HAVING count(*) = ?)`, args
}

// CountQueued counts pending and queued runs (the --max-queued-runs limit).
func (s *Store) CountQueued(ctx context.Context) (int, error) {
	var n int
	if err := s.db.NewRaw("SELECT count(*) FROM sluice_runs WHERE status IN ('pending', 'queued')").Scan(ctx, &n); err != nil {
		return 0, translate("count queued runs", err)
	}
	return n, nil
}

// CountByStatus counts runs per status; statuses without runs are absent.
func (s *Store) CountByStatus(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		Status string `bun:"status"`
		N      int    `bun:"n"`
	}
	if err := s.db.NewRaw("SELECT status, count(*) AS n FROM sluice_runs GROUP BY status").Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("count runs by status", err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}

// idFloor is the smallest UUIDv7 text of millisecond ms: every id made at ms or later
// sorts at or after it, every id made before it sorts before (ids are lowercase hex).
func idFloor(ms int64) string {
	ms = min(max(ms, 0), 1<<48-1)
	h := fmt.Sprintf("%012x", ms)
	return h[:8] + "-" + h[8:] + "-0000-0000-000000000000"
}
