package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sluicehq/sluice/application/approvals"
)

type changeRequestArgs struct {
	ChangeRequestID string `json:"change_request_id" jsonschema:"the change request id, as propose_run returned it"`
}

type changeRequestAnswer struct {
	ChangeRequest approvals.View `json:"change_request" jsonschema:"the change request"`
	Decided       bool           `json:"decided" jsonschema:"true once it is approved, rejected or expired: stop polling; when approved, follow run_id with get_run"`
}

type listChangeRequestsArgs struct {
	Status changeStatus `json:"status,omitempty" jsonschema:"only change requests in this status"`
	Limit  int          `json:"limit,omitempty" jsonschema:"page size, 1 to 500 (default 50)"`
	Cursor string       `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
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
	return nil, changeRequestAnswer{ChangeRequest: approvals.NewView(cr), Decided: cr.Status != approvals.Proposed}, nil
}

func (t tools) listChangeRequests(ctx context.Context, _ *sdk.CallToolRequest, in listChangeRequestsArgs) (*sdk.CallToolResult, approvals.ListView, error) {
	limit := in.Limit
	if limit == 0 {
		limit = approvals.DefaultListLimit
	}
	if limit < 1 || limit > approvals.MaxListLimit {
		return nil, approvals.ListView{}, badArgument("limit", "must be between 1 and 500")
	}
	f := approvals.Filter{Limit: limit, After: in.Cursor}
	if in.Status != "" {
		st, err := approvals.ParseStatus(string(in.Status))
		if err != nil {
			return nil, approvals.ListView{}, badArgument("status", err.Error())
		}
		f.Status = st
	}
	list, err := t.s.deps.Approvals.List(ctx, t.p, f)
	if err != nil {
		return nil, approvals.ListView{}, t.s.fail(ctx, "list_change_requests", err)
	}
	return nil, approvals.NewListView(list, limit), nil
}
