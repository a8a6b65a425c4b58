package http

import "strings"

// operation names one operation for generated clients: a stable operationId (the method
// name a generator gives it) and the tag it is grouped under.
type operation struct{ id, tag string }

// operations maps "METHOD /path" of every documented route to its operation. A test
// requires an entry for every route, so a new route is named before it ships.
func operations() map[string]operation {
	return map[string]operation{
		"GET /livez":    {"getLiveness", "probes"},
		"GET /readyz":   {"getReadiness", "probes"},
		"GET /metrics":  {"getMetrics", "probes"},
		"POST /v1/runs": {"submitRun", "runs"},
		"GET /v1/runs":  {"listRuns", "runs"},

		"GET /v1/runs/{id}":           {"getRun", "runs"},
		"DELETE /v1/runs/{id}":        {"deleteRun", "runs"},
		"GET /v1/runs/{id}/shards":    {"listRunShards", "runs"},
		"GET /v1/runs/{id}/config":    {"getRunConfig", "runs"},
		"POST /v1/runs/{id}/cancel":   {"cancelRun", "runs"},
		"POST /v1/runs/{id}/rollback": {"rollbackRun", "runs"},
		"GET /v1/runs/{id}/logs":      {"getRunLogs", "runs"},
		"GET /v1/audit":               {"listAuditEntries", "audit"},
		"GET /v1/connectors":          {"listConnectors", "connectors"},
		"GET /v1/openapi.json":        {"getOpenAPIDocument", "meta"},

		"POST /v1/templates":                            {"registerTemplate", "templates"},
		"GET /v1/templates":                             {"listTemplates", "templates"},
		"GET /v1/templates/{id}":                        {"getTemplate", "templates"},
		"DELETE /v1/templates/{id}":                     {"deleteTemplate", "templates"},
		"POST /v1/templates/{id}/runs":                  {"runTemplate", "templates"},
		"POST /v1/templates/{id}/fanout":                {"fanOutTemplate", "templates"},
		"POST /v1/tenants/{tenant}/templates/{id}/runs": {"runTenantTemplate", "templates"},
		"POST /v1/templates/{id}/schedules":             {"createSchedule", "schedules"},
		"GET /v1/schedules":                             {"listSchedules", "schedules"},
		"GET /v1/schedules/preview":                     {"previewSchedule", "schedules"},
		"GET /v1/schedules/{id}":                        {"getSchedule", "schedules"},
		"DELETE /v1/schedules/{id}":                     {"deleteSchedule", "schedules"},
		"POST /v1/schedules/{id}/pause":                 {"pauseSchedule", "schedules"},
		"POST /v1/schedules/{id}/resume":                {"resumeSchedule", "schedules"},
		"GET /v1/schedules/{id}/ticks":                  {"listScheduleTicks", "schedules"},
		"POST /v1/backfill":                             {"startBackfill", "schedules"},
		"GET /v1/change-requests":                       {"listChangeRequests", "change-requests"},
		"GET /v1/change-requests/{id}":                  {"getChangeRequest", "change-requests"},
		"POST /v1/change-requests/{id}/approve":         {"approveChangeRequest", "change-requests"},
		"POST /v1/change-requests/{id}/reject":          {"rejectChangeRequest", "change-requests"},
		"POST " + mcpRoute:                              {"postMCPMessage", "mcp"},
		"GET " + mcpRoute:                               {"openMCPStream", "mcp"},
		"DELETE " + mcpRoute:                            {"endMCPSession", "mcp"},
	}
}

// tags describes the groups, in the order a reader meets them.
func tags() []any {
	return []any{
		obj{"name": "runs", "description": "Submit, list, follow, cancel, roll back and delete pipeline runs"},
		obj{"name": "templates", "description": "Register pipeline templates and start runs of them with typed params"},
		obj{"name": "schedules", "description": "Run templates on a cron, and backfill time ranges"},
		obj{"name": "change-requests", "description": "Runs proposed under --require-approval, decided by another operator"},
		obj{"name": "audit", "description": "Who did what (admins)"},
		obj{"name": "connectors", "description": "The connectors a config can use, with their config schemas"},
		obj{"name": "probes", "description": "Liveness, readiness and metrics: open, no token"},
		obj{"name": "meta", "description": "This document: open, no token"},
		obj{"name": "mcp", "description": "The Model Context Protocol endpoint for AI agents (with --mcp)"},
	}
}

// nameOperations sets operationId and tags on every operation of ps.
func nameOperations(ps obj) {
	ops := operations()
	for path, item := range ps {
		for method, o := range item.(obj) {
			if named, ok := ops[strings.ToUpper(method)+" "+path]; ok {
				o.(obj)["operationId"] = named.id
				o.(obj)["tags"] = []any{named.tag}
			}
		}
	}
}

// documentSchemas are the small bodies that complete the document: the probes', the
// document's own and an MCP message's.
func documentSchemas() obj {
	live := obj{"status": obj{"type": "string", "enum": []any{"ok"}}}
	doc := obj{"openapi": typ("string", "3.1.0"), "info": obj{"type": "object", "description": "title, version (the server's), description",
		"additionalProperties": true}, "paths": obj{"type": "object", "additionalProperties": true}}
	rpc := obj{
		"jsonrpc": obj{"type": "string", "enum": []any{"2.0"}},
		"id":      obj{"oneOf": []any{typ("string", ""), typ("integer", "")}, "description": "absent in notifications"},
		"method":  typ("string", "initialize, tools/list, tools/call, …"),
		"params":  obj{"type": "object", "description": "the method's params", "additionalProperties": true},
		"result":  obj{"description": "a response's result"},
		"error":   obj{"type": "object", "description": "a response's JSON-RPC error", "additionalProperties": true},
	}
	return obj{
		"Liveness":        closedObject([]string{"status"}, live),
		"OpenAPIDocument": obj{"type": "object", "properties": doc, "required": []string{"openapi", "info", "paths"}, "additionalProperties": true},
		"MCPMessage":      obj{"type": "object", "properties": rpc, "required": []string{"jsonrpc"}, "additionalProperties": false},
	}
}

// exampleRun is a run as GET /v1/runs/{id} shows it, for the examples of the main operations.
func exampleRun() obj {
	return obj{"run_id": "01938f2e-8a4b-7c3d-9e5f-0a1b2c3d4e5f", "name": "orders-mirror", "status": "completed",
		"pool": "default", "tenant": nil, "labels": obj{"team": "data"}, "trigger_kind": "api", "run_key": nil,
		"run_date": "2026-12-01", "attempt": 1, "max_attempts": 3,
		"owner":      obj{"instance_id": "01938f2e-0000-7000-8000-000000000001", "listen": "127.0.0.1:8080"},
		"created_at": "2026-12-01T09:00:00Z", "claimed_at": "2026-12-01T09:00:00.01Z",
		"started_at": "2026-12-01T09:00:00.02Z", "finished_at": "2026-12-01T09:00:00.4Z",
		"stats": obj{"rows_read": 25000, "rows_written": 25000, "pages": 3, "bytes": 1835008, "elapsed_ms": 380},
		"error": nil, "shards": nil, "template": nil, "retry": nil, "not_before": nil,
		"attempts": []any{obj{"n": 1, "instance_id": "01938f2e-0000-7000-8000-000000000001",
			"claimed_at": "2026-12-01T09:00:00.01Z", "ended_at": "2026-12-01T09:00:00.4Z", "outcome": "completed",
			"error": nil}}}
}

// addExamples puts request and answer examples on the operations people start with.
func addExamples(ps obj) {
	example := func(path, method, where string, v any) {
		o := ps[path].(obj)[method].(obj)
		var content obj
		if where == "request" {
			content = o["requestBody"].(obj)["content"].(obj)
		} else {
			content = o["responses"].(obj)[where].(obj)["content"].(obj)
		}
		content["application/json"].(obj)["example"] = v
	}
	cfg := "version: 1\nname: orders-mirror\npipeline:\n  source: {type: file, config: {path: orders.csv}}\n" +
		"  sink: {type: sqlite, config: {connection_url: \"sqlite:warehouse.db\", table_name: orders, write_mode: append, create_table: true}}\n"
	example("/v1/runs", "post", "request", obj{"config": cfg, "labels": obj{"team": "data"}, "idempotency_key": "orders-2026-12-01"})
	example("/v1/runs", "post", "202", obj{"run_id": "01938f2e-8a4b-7c3d-9e5f-0a1b2c3d4e5f", "status": "pending", "replayed": false})
	example("/v1/runs", "get", "200", obj{"runs": []any{exampleRun()}, "next_cursor": nil})
	example("/v1/runs/{id}", "get", "200", exampleRun())
	example("/v1/runs/{id}/cancel", "post", "202", exampleRun())
	example("/v1/templates/{id}/runs", "post", "202", obj{"run_id": "01938f2e-8a4b-7c3d-9e5f-0a1b2c3d4e60", "status": "pending", "replayed": false})
	example("/v1/change-requests/{id}/approve", "post", "200", obj{"id": "01938f2f-0000-7000-8000-00000000000a",
		"proposer": "otto", "tenant": nil, "name": "orders-mirror", "pool": "default", "trigger_kind": "api",
		"status": "approved", "created_at": "2026-12-01T09:00:00Z", "expires_at": "2026-12-08T09:00:00Z",
		"decided_by": "olga", "decided_at": "2026-12-01T09:05:00Z", "run_id": "01938f2f-1111-7000-8000-00000000000b"})
}
