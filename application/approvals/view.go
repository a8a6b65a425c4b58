package approvals

import "time"

// View is a change request as every transport shows it (REST's GET /v1/change-requests
// and MCP's get_change_request / list_change_requests), so an agent reads the shape a
// REST client reads. It never carries the stored request, which may hold credentials.
// Absent values are null, times RFC 3339 in UTC.
type View struct {
	ID          string  `json:"id" jsonschema:"the change request id, as the proposal returned it"`
	Proposer    string  `json:"proposer" jsonschema:"the principal that proposed it"`
	Tenant      *string `json:"tenant" jsonschema:"the tenant, or null"`
	Name        string  `json:"name" jsonschema:"the pipeline name the run will have"`
	Pool        string  `json:"pool" jsonschema:"the pool the run will execute in"`
	TriggerKind string  `json:"trigger_kind" jsonschema:"what proposed it: api, cli, mcp, template, rollback or backfill"`
	Status      string  `json:"status" jsonschema:"proposed, approved, rejected or expired"`
	CreatedAt   string  `json:"created_at" jsonschema:"when it was proposed"`
	ExpiresAt   string  `json:"expires_at" jsonschema:"when it expires unless decided"`
	DecidedBy   *string `json:"decided_by" jsonschema:"who approved or rejected it, or null"`
	DecidedAt   *string `json:"decided_at" jsonschema:"when it was decided, or null"`
	RunID       *string `json:"run_id" jsonschema:"the run approval created (follow it), or null"`
}

// NewView shows cr.
func NewView(cr *ChangeRequest) View {
	return View{ID: cr.ID, Proposer: cr.Proposer, Tenant: optional(cr.Tenant), Name: cr.Name, Pool: cr.Pool,
		TriggerKind: cr.TriggerKind, Status: string(cr.Status), CreatedAt: stamp(cr.CreatedAt),
		ExpiresAt: stamp(cr.ExpiresAt), DecidedBy: optional(cr.DecidedBy), DecidedAt: optional(stamp(cr.DecidedAt)),
		RunID: optional(cr.RunID)}
}

// ListView is one page of change requests, newest first, as every transport shows it.
type ListView struct {
	ChangeRequests []View `json:"change_requests" jsonschema:"newest first"`
	// NextCursor continues the list; null on the last page.
	NextCursor *string `json:"next_cursor" jsonschema:"pass as cursor for the next page; null on the last page"`
}

// NewListView shows one page read with limit: a full page has a cursor to the next one.
func NewListView(list []*ChangeRequest, limit int) ListView {
	out := ListView{ChangeRequests: make([]View, 0, len(list))}
	for _, cr := range list {
		out.ChangeRequests = append(out.ChangeRequests, NewView(cr))
	}
	if len(list) > 0 && len(list) == limit {
		out.NextCursor = optional(list[len(list)-1].ID)
	}
	return out
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
