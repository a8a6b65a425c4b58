package http

import (
	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/domain/run"
)

// changeRequestPaths documents the change-request routes (SPEC §9.5).
func changeRequestPaths() obj {
	id := param("id", "path", "the change request id", typ("string", ""))
	cr := ref("ChangeRequest")
	decide := func(summary string) obj {
		return op(summary, []any{id}, obj{"200": jsonBody(cr, "the decided change request")},
			"invalid_body", "not_found", "conflict", "history_unavailable")
	}
	approve := decide("Approve a change request: its run is created (trigger kind approval) by an operator or admin other than the proposer")
	addErrors(approve, "invalid_config", "invalid_params", "directive_refused", "pool_unserved", "vault_key_required",
		"path_refused", "host_refused", "history_refused", "queue_full", "draining")
	return obj{
		"/v1/change-requests": obj{"get": op("List change requests, newest first", []any{
			param("status", "query", "only change requests in this status", enum(approvals.Statuses())),
			param("limit", "query", "page size", obj{"type": "integer", "minimum": 1, "maximum": maxListLimit, "default": defaultListLimit}),
			param("cursor", "query", "next_cursor of the previous page", typ("string", "")),
		}, obj{"200": jsonBody(ref("ChangeRequestList"), "one page")}, "invalid_body", "history_unavailable")},
		"/v1/change-requests/{id}": obj{"get": op("Get a change request: what became of a proposal (run_id once approved)", []any{id},
			obj{"200": jsonBody(cr, "the change request")}, "not_found", "history_unavailable")},
		"/v1/change-requests/{id}/approve": obj{"post": approve},
		"/v1/change-requests/{id}/reject":  obj{"post": decide("Reject a change request; nothing runs")},
	}
}

// changeRequestSchemas: a change request never shows the proposed request itself.
func changeRequestSchemas() obj {
	cr := obj{
		"id": typ("string", ""), "proposer": typ("string", "the principal who proposed it"),
		"tenant": nullableType("string", ""), "name": typ("string", "the pipeline name the run will have"),
		"pool":         typ("string", "the pool it was proposed with; approval keeps it"),
		"trigger_kind": enum(run.TriggerKinds()),
		"status":       enum(approvals.Statuses()),
		"created_at":   timestamp(""), "expires_at": timestamp("7 days after created_at"),
		"decided_by": nullableType("string", ""), "decided_at": timestamp(""),
		"run_id": nullableType("string", "the run approval created"),
	}
	list := obj{"change_requests": obj{"type": "array", "items": ref("ChangeRequest")}, "next_cursor": nullableType("string", "null on the last page")}
	return obj{
		"ChangeRequest":     closedObject(propNames(cr), cr),
		"ChangeRequestList": closedObject(propNames(list), list),
	}
}
