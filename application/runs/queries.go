package runs

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/sluicehq/sluice/domain/naming"
	"github.com/sluicehq/sluice/domain/run"
)

// Page sizes. A limit above the maximum is refused (ErrInvalidRequest naming limit)
// rather than clamped, so a client never mistakes a short page for the end.
const (
	DefaultListLimit  = 50
	MaxListLimit      = 500
	DefaultLogsLimit  = 1000
	MaxLogsLimit      = 10000
	DefaultAuditLimit = 100
	MaxAuditLimit     = 1000
)

// Get returns a run without its config (the run resource never shows it; Config does).
// A tenant principal gets run.ErrNotFound for another tenant's run.
func (s *Service) Get(ctx context.Context, p Principal, id string) (*Record, error) {
	if err := canRead(p); err != nil {
		return nil, err
	}
	rec, err := s.lookup(ctx, p, id)
	if err != nil {
		return nil, err
	}
	rec.Config = ""
	return rec, nil
}

// lookup reads a run the principal may see, config included.
func (s *Service) lookup(ctx context.Context, p Principal, id string) (*Record, error) {
	if id == "" || len(id) > run.MaxIDLen {
		return nil, fmt.Errorf("run %q: %w", id, run.ErrNotFound)
	}
	rec, err := bounded(ctx, s.cfg.QueryTimeout, func(ctx context.Context) (*Record, error) { return s.deps.Store.Get(ctx, id) })
	if err != nil {
		return nil, err
	}
	if err := visible(p, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// List returns one page of runs, newest first, without their configs. f.Cursor is the
// opaque cursor of the previous page (Page.NextCursor); f.After is ignored when it is
// set. A tenant principal sees only its tenant, whatever f.Tenant says. Limit 0 means
// DefaultListLimit; above MaxListLimit is refused.
func (s *Service) List(ctx context.Context, p Principal, f Filter) (Page, error) {
	if err := canRead(p); err != nil {
		return Page{}, err
	}
	f.Labels = maps.Clone(f.Labels)
	f.Status = slices.Clone(f.Status)
	if p.Tenant != "" {
		f.Tenant, f.TenantSet = p.Tenant, true
	}
	if err := checkFilter(f); err != nil {
		return Page{}, err
	}
	switch {
	case f.Limit == 0:
		f.Limit = DefaultListLimit
	case f.Limit < 0 || f.Limit > MaxListLimit:
		return Page{}, invalid("limit", fmt.Sprintf("must be between 1 and %d (got %d)", MaxListLimit, f.Limit))
	}
	if f.Cursor != "" {
		after, err := decodeCursor(f.Cursor)
		if err != nil {
			return Page{}, err
		}
		f.After = after
	}
	limit := f.Limit
	f.Limit = limit + 1 // one more than asked tells whether another page exists
	f.Cursor = ""
	recs, err := bounded(ctx, s.cfg.QueryTimeout, func(ctx context.Context) ([]*Record, error) { return s.deps.Store.List(ctx, f) })
	if err != nil {
		return Page{}, err
	}
	var page Page
	if len(recs) > limit {
		recs = recs[:limit]
		page.NextCursor = encodeCursor(recs[limit-1].ID)
	}
	for _, r := range recs {
		r.Config = ""
	}
	page.Runs = recs
	if page.Runs == nil {
		page.Runs = []*Record{}
	}
	return page, nil
}

func checkFilter(f Filter) error {
	for i, st := range f.Status {
		if _, err := run.ParseStatus(st); err != nil {
			return invalid("status["+strconv.Itoa(i)+"]", err.Error())
		}
	}
	if f.Name != "" && !naming.Valid(f.Name) {
		return invalid("name", naming.Check("name", f.Name).Error())
	}
	if f.Pool != "" && !naming.Valid(f.Pool) {
		return invalid("pool", naming.Check("pool", f.Pool).Error())
	}
	if f.Tenant != "" && !naming.Valid(f.Tenant) {
		return invalid("tenant", naming.Check("tenant", f.Tenant).Error())
	}
	if err := run.CheckLabels(f.Labels, run.MaxLabelFilters); err != nil {
		return invalid("label", err.Error())
	}
	if err := checkKey("run_key", f.RunKey); err != nil {
		return err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return invalid("until", "must be after since")
	}
	return nil
}

// The cursor is the id of the last run of a page, base64url-encoded: opaque to clients,
// so the keyset can change without breaking them.
func encodeCursor(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) == 0 || len(b) > run.MaxIDLen {
		return "", invalid("cursor", "is not a cursor this server returned: pass next_cursor of the previous page unchanged")
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return "", invalid("cursor", "is not a cursor this server returned: pass next_cursor of the previous page unchanged")
		}
	}
	return string(b), nil
}

// Logs returns up to limit persisted lines of a run with seq > after. Limit 0 means
// DefaultLogsLimit; above MaxLogsLimit is refused. Done is true once the run is terminal
// and this page holds its last line.
func (s *Service) Logs(ctx context.Context, p Principal, id string, after int64, limit int) (LogPage, error) {
	if err := canRead(p); err != nil {
		return LogPage{}, err
	}
	switch {
	case limit == 0:
		limit = DefaultLogsLimit
	case limit < 0 || limit > MaxLogsLimit:
		return LogPage{}, invalid("limit", fmt.Sprintf("must be between 1 and %d (got %d)", MaxLogsLimit, limit))
	}
	if after < 0 {
		return LogPage{}, invalid("after", "must not be negative")
	}
	// Read the status before the lines: a run seen terminal here has written its last
	// line already, so an empty tail really is the end.
	rec, err := s.lookup(ctx, p, id)
	if err != nil {
		return LogPage{}, err
	}
	lines, err := bounded(ctx, s.cfg.QueryTimeout, func(ctx context.Context) ([]LogLine, error) { return s.deps.Store.Logs(ctx, id, after, limit) })
	if err != nil {
		return LogPage{}, err
	}
	page := LogPage{Lines: lines, Next: after}
	if page.Lines == nil {
		page.Lines = []LogLine{}
	}
	if n := len(lines); n > 0 {
		page.Next = lines[n-1].Seq
	}
	page.Done = run.Status(rec.Status).Terminal() && len(lines) < limit
	return page, nil
}

// Follow announces that p follows the log of run id (GET /v1/runs/{id}/logs?follow=1):
// the run's end is then notified to every cluster member, so a stream followed on one
// member ends as soon as the run ends on another. Runs nobody follows end without a
// notification (each one serializes commits on PostgreSQL). The caller subscribes to
// Watch before and reads the log after, so neither the end of the run nor its
// notification can fall between the two. A run that ended needs no mark.
func (s *Service) Follow(ctx context.Context, p Principal, id string) error {
	if err := canRead(p); err != nil {
		return err
	}
	rec, err := s.lookup(ctx, p, id)
	if err != nil {
		return err
	}
	if rec.Followed || run.Status(rec.Status).Terminal() {
		return nil
	}
	_, err = bounded(ctx, s.cfg.QueryTimeout, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.deps.Store.MarkFollowed(ctx, id)
	})
	return err
}

// Shards returns one page of a run's shards by index (SPEC §2.3): limit 0 means
// DefaultListLimit; cursor is the NextCursor of the previous page ("" for the first).
func (s *Service) Shards(ctx context.Context, p Principal, id, cursor string, limit int) (ShardPage, error) {
	if err := canRead(p); err != nil {
		return ShardPage{}, err
	}
	switch {
	case limit == 0:
		limit = DefaultListLimit
	case limit < 0 || limit > MaxListLimit:
		return ShardPage{}, invalid("limit", fmt.Sprintf("must be between 1 and %d (got %d)", MaxListLimit, limit))
	}
	after := -1
	if cursor != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(cursor, shardCursorPrefix))
		if err != nil || !strings.HasPrefix(cursor, shardCursorPrefix) || n < 0 {
			return ShardPage{}, invalid("cursor", "is not a cursor this server issued: pass next_cursor of the previous page")
		}
		after = n
	}
	if _, err := s.lookup(ctx, p, id); err != nil {
		return ShardPage{}, err
	}
	list, err := bounded(ctx, s.cfg.QueryTimeout, func(ctx context.Context) ([]ShardRecord, error) {
		return s.deps.Store.Shards(ctx, id, after, limit+1)
	})
	if err != nil {
		return ShardPage{}, err
	}
	page := ShardPage{Shards: list}
	if len(list) > limit {
		page.Shards = list[:limit]
		page.NextCursor = shardCursorPrefix + strconv.Itoa(list[limit-1].Index)
	}
	if page.Shards == nil {
		page.Shards = []ShardRecord{}
	}
	return page, nil
}

// shardCursorPrefix marks a shard cursor, so a run cursor passed here is refused.
const shardCursorPrefix = "s"

// Audit returns audit entries after the given position (admin only, untenanted). Limit 0
// means DefaultAuditLimit; above MaxAuditLimit is refused.
func (s *Service) Audit(ctx context.Context, p Principal, after int64, limit int) ([]AuditEntry, error) {
	if err := need(p, Admin, "read the audit log"); err != nil {
		return nil, err
	}
	switch {
	case limit == 0:
		limit = DefaultAuditLimit
	case limit < 0 || limit > MaxAuditLimit:
		return nil, invalid("limit", fmt.Sprintf("must be between 1 and %d (got %d)", MaxAuditLimit, limit))
	}
	if after < 0 {
		return nil, invalid("after", "must not be negative")
	}
	entries, err := bounded(ctx, s.cfg.QueryTimeout, func(ctx context.Context) ([]AuditEntry, error) {
		return s.deps.Store.ListAudit(ctx, after, limit)
	})
	if err != nil {
		return nil, err
	}
	if entries == nil {
		entries = []AuditEntry{}
	}
	return entries, nil
}
