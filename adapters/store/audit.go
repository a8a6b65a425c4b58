package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
)

// Audit page sizes.
const (
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// Audit appends an entry; a zero At is now. Details must already be redacted.
func (s *Store) Audit(ctx context.Context, e runs.AuditEntry) error {
	return translate("write audit entry", insertAudit(ctx, s.db, e))
}

// insertAudit appends e through db, a transaction when the entry belongs to one.
func insertAudit(ctx context.Context, db bun.IDB, e runs.AuditEntry) error {
	vals, err := auditValues(e)
	if err != nil {
		return err
	}
	_, err = db.NewRaw(auditInsert+auditPlaceholders, vals...).Exec(ctx)
	return err
}

// auditInsert starts a multi-row INSERT of audit entries; auditValues gives a row's values.
const (
	auditInsert       = "INSERT INTO sluice_audit (at, actor, action, run_id, details) VALUES "
	auditPlaceholders = "(?, ?, ?, ?, ?)"
)

func auditValues(e runs.AuditEntry) ([]any, error) {
	at := e.At
	if at.IsZero() {
		at = time.Now()
	}
	details := "{}"
	if len(e.Details) > 0 {
		b, err := json.Marshal(e.Details)
		if err != nil {
			return nil, fmt.Errorf("audit details: %w", err)
		}
		details = string(b)
	}
	return []any{at.UnixMilli(), e.Actor, e.Action, nullIfEmpty(e.RunID), details}, nil
}

// ListAudit returns up to limit entries with an id greater than after, oldest first;
// AuditEntry.Seq of the last one is the cursor of the next page. limit ≤ 0 means 100,
// and at most 1,000 are returned.
func (s *Store) ListAudit(ctx context.Context, after int64, limit int) ([]runs.AuditEntry, error) {
	if limit <= 0 {
		limit = DefaultAuditLimit
	}
	limit = min(limit, MaxAuditLimit)
	var rows []struct {
		ID      int64  `bun:"id"`
		At      int64  `bun:"at"`
		Actor   string `bun:"actor"`
		Action  string `bun:"action"`
		RunID   string `bun:"run_id"`
		Details string `bun:"details"`
	}
	err := s.db.NewRaw("SELECT id, at, actor, action, run_id, details FROM sluice_audit WHERE id > ? ORDER BY id LIMIT ?",
		after, limit).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("list audit entries", err)
	}
	out := make([]runs.AuditEntry, len(rows))
	for i, r := range rows {
		out[i] = runs.AuditEntry{Seq: r.ID, At: fromMS(r.At), Actor: r.Actor, Action: r.Action, RunID: r.RunID}
		if r.Details != "" && r.Details != "{}" {
			if err := json.Unmarshal([]byte(r.Details), &out[i].Details); err != nil {
				return nil, fmt.Errorf("audit entry %d: details are not JSON: %w", r.ID, err)
			}
		}
	}
	return out, nil
}
