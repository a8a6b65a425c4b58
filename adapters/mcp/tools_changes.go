package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sluicehq/sluice/application/approvals"
)

// changeRequestView is a change request as REST shows it (GET /v1/change-requests): never
// the stored request itself.
type changeRequestView struct {
	ID          string  `json:"id" jsonschema:"the change request id, as propose_run returned it"`
	Proposer    string  `json:"proposer" jsonschema:"the principal that proposed it"`
	Tenant      *string `json:"tenant" jsonschema:"the tenant, or null"`
	Name        string  `json:"name" jsonschema:"the pipeline name the run will have"`
	Pool        string  `json:"pool" jsonschema:"the pool the run will execute in"`
	TriggerKind string  `json:"trigger_kind" jsonschema:"what proposed it (api, cli, mcp, template, ...)"`
	Status      string  `json:"status" jsonschema:"proposed, approved, rejected or expired"`
	CreatedAt   string  `json:"created_at" jsonschema:"when it was proposed"`
	ExpiresAt   string  `json:"expires_at" jsonschema:"when it expires unless decided"`
	DecidedBy   *string `json:"decided_by" jsonschema:"who approved or rejected it, or null"`
	DecidedAt   *string `json:"decided_at" jsonschema:"when, or null"`
	RunID       *string `json:"run_id" jsonschema:"the run approval created (follow it with get_run), or null"`
}

func toChangeRequestView(cr *approvals.ChangeRequest) changeRequestView {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return changeRequestView{ID: cr.ID, Proposer: cr.Proposer, Tenant: opt(cr.Tenant), Name: cr.Name, Pool: cr.Pool,
		TriggerKind: cr.TriggerKind, Status: string(cr.Status), CreatedAt: stamp(cr.CreatedAt),
		ExpiresAt: stamp(cr.ExpiresAt), DecidedBy: opt(cr.DecidedBy), DecidedAt: opt(stamp(cr.DecidedAt)),
		RunID: opt(cr.RunID)}
}

type changeRequestArgs struct {
	ChangeRequestID string `json:"change_request_id" jsonschema:"the change request id, as propose_run returned it"`
}

type changeRequestAnswer struct {
	ChangeRequest changeRequestView `json:"change_request" jsonschema:"the change request"`
	Decided       bool              `json:"decided" jsonschema:"true once it is approved, rejected or expired: stop polling; when approved, follow run_id with get_run"`
}

type listChangeRequestsArgs struct {
	Status changeStatus `json:"status,omitempty" jsonschema:"only change requests in this status"`
	Limit  int          `json:"limit,omitempty" jsonschema:"page size, 1 to 500 (default 50)"`
	Cursor string       `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

type listChangeRequestsAnswer struct {
	ChangeRequests []changeRequestView `json:"change_requests" jsonschema:"newest first"`
	NextCursor     string              `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page; absent on the last page"`
}

func (t tools) addChangeRequestTools(srv *sdk.Server) {
	addTool(srv, &sdk.Tool{Name: "get_change_request", Annotations: readOnly(),
		Description: "Get what became of a change request (after propose_run): proposed, approved (with the run_id " +
			"to follow with get_run), rejected or expired."}, t.getChangeRequest)
	addTool(srv, &sdk.Tool{Name: "list_change_requests", Annotations: readOnly(),
		Description: "List change requests, newest first, optionally by status; page with cursor."}, t.listChangeRequests)
}

func (t tools) getChangeRequest(ctx context.Context, _ *sdk.CallToolRequest, in changeRequestArgs) (*sdk.CallToolResult, changeRequestAnswer, error) {
	cr, err := t.s.deps.Approvals.Get(ctx, t.p, in.ChangeRequestID)
	if err != nil {
		return nil, changeRequestAnswer{}, t.s.fail(ctx, "get_change_request", err)
	}
	return nil, changeRequestAnswer{ChangeRequest: toChangeRequestView(cr), Decided: cr.Status != approvals.Proposed}, nil
}

func (t tools) listChangeRequests(ctx context.Context, _ *sdk.CallToolRequest, in listChangeRequestsArgs) (*sdk.CallToolResult, listChangeRequestsAnswer, error) {
	limit := in.Limit
	if limit == 0 {
		limit = approvals.DefaultListLimit
	}
	if limit < 1 || limit > approvals.MaxListLimit {
		return nil, listChangeRequestsAnswer{}, badArgument("limit", "must be between 1 and 500")
	}
	f := approvals.Filter{Limit: limit, After: in.Cursor}
	if in.Status != "" {
		st, err := approvals.ParseStatus(string(in.Status))
		if err != nil {
			return nil, listChangeRequestsAnswer{}, badArgument("status", err.Error())
		}
		f.Status = st
	}
	list, err := t.s.deps.Approvals.List(ctx, t.p, f)
	if err != nil {
		return nil, listChangeRequestsAnswer{}, t.s.fail(ctx, "list_change_requests", err)
	}
	out := listChangeRequestsAnswer{ChangeRequests: make([]changeRequestView, 0, len(list))}
	for _, cr := range list {
		out.ChangeRequests = append(out.ChangeRequests, toChangeRequestView(cr))
	}
	if len(list) == limit {
		out.NextCursor = list[len(list)-1].ID
	}
	return nil, out, nil
}
