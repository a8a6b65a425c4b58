package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/domain/run"
)

var _ approvals.Store = (*Store)(nil)

type changeRequestRow struct {
	ID            string         `bun:"id"`
	Proposer      string         `bun:"proposer"`
	Tenant        string         `bun:"tenant"`
	Name          string         `bun:"name"`
	Pool          string         `bun:"pool"`
	TriggerKind   string         `bun:"trigger_kind"`
	Request       string         `bun:"request"`
	RequestSealed bool           `bun:"request_sealed"`
	Status        string         `bun:"status"`
	CreatedAt     int64          `bun:"created_at"`
	ExpiresAt     int64          `bun:"expires_at"`
	DecidedBy     sql.NullString `bun:"decided_by"`
	DecidedAt     sql.NullInt64  `bun:"decided_at"`
	RunID         sql.NullString `bun:"run_id"`
}

const changeRequestCols = "id, proposer, tenant, name, pool, trigger_kind, request, request_sealed, status, " +
	"created_at, expires_at, decided_by, decided_at, run_id"

func (r changeRequestRow) changeRequest() *approvals.ChangeRequest {
	return &approvals.ChangeRequest{ID: r.ID, Proposer: r.Proposer, Tenant: r.Tenant, Name: r.Name, Pool: r.Pool,
		TriggerKind: r.TriggerKind, Request: r.Request, RequestSealed: r.RequestSealed,
		Status: approvals.Status(r.Status), CreatedAt: fromMS(r.CreatedAt), ExpiresAt: fromMS(r.ExpiresAt),
		DecidedBy: r.DecidedBy.String, DecidedAt: fromMS(r.DecidedAt.Int64), RunID: r.RunID.String}
}

// CreateChangeRequest stores a new change request; see approvals.Store.
func (s *Store) CreateChangeRequest(ctx context.Context, cr *approvals.ChangeRequest) error {
	_, err := s.db.NewRaw("INSERT INTO sluice_change_requests ("+changeRequestCols+
		") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)",
		cr.ID, cr.Proposer, cr.Tenant, cr.Name, cr.Pool, cr.TriggerKind, cr.Request, cr.RequestSealed,
		string(cr.Status), cr.CreatedAt.UnixMilli(), cr.ExpiresAt.UnixMilli()).Exec(ctx)
	return translate("store change request "+cr.ID, err)
}

// GetChangeRequest returns one change request as stored.
func (s *Store) GetChangeRequest(ctx context.Context, id string) (*approvals.ChangeRequest, error) {
	var r changeRequestRow
	err := s.db.NewRaw("SELECT "+changeRequestCols+" FROM sluice_change_requests WHERE id = ?", id).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("change request %s: %w", id, run.ErrNotFound)
	}
	if err != nil {
		return nil, translate("read change request "+id, err)
	}
	return r.changeRequest(), nil
}

// ListChangeRequests returns a page, newest first; see approvals.Store.
func (s *Store) ListChangeRequests(ctx context.Context, f approvals.Filter) ([]*approvals.ChangeRequest, error) {
	q := "SELECT " + changeRequestCols + " FROM sluice_change_requests WHERE 1 = 1"
	var args []any
	now := f.Now.UnixMilli()
	switch f.Status {
	case "":
	case approvals.Proposed:
		q += " AND status = 'proposed' AND expires_at > ?"
		args = append(args, now)
	case approvals.Expired:
		// Expiry is not written: a proposed request past its time is expired.
		q += " AND ((status = 'proposed' AND expires_at <= ?) OR status = 'expired')"
		args = append(args, now)
	default:
		q += " AND status = ?"
		args = append(args, string(f.Status))
	}
	if f.After != "" {
		q += " AND id < ?"
		args = append(args, f.After)
	}
	q += " ORDER BY id DESC LIMIT ?"
	args = append(args, f.Limit)
	var rows []changeRequestRow
	if err := s.db.NewRaw(q, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("list change requests", err)
	}
	out := make([]*approvals.ChangeRequest, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.changeRequest())
	}
	return out, nil
}

// DecideChangeRequest is the conditional decision; see approvals.Store.
func (s *Store) DecideChangeRequest(ctx context.Context, id string, to approvals.Status, by string, at time.Time, runID string) error {
	res, err := s.db.NewRaw(`UPDATE sluice_change_requests SET status = ?, decided_by = ?, decided_at = ?, run_id = ?
WHERE id = ? AND status = 'proposed' AND expires_at > ?`,
		string(to), by, at.UnixMilli(), nullIfEmpty(runID), id, at.UnixMilli()).Exec(ctx)
	if err != nil {
		return translate("decide change request "+id, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	if _, err := s.GetChangeRequest(ctx, id); err != nil {
		return err
	}
	return fmt.Errorf("change request %s: %w", id, approvals.ErrDecided)
}
