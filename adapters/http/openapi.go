package http

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// obj keeps the document below readable; the document is plain JSON data.
type obj = map[string]any

// renderOpenAPI builds the OpenAPI 3.1 document of every route New registers (a test
// keeps the two sets equal). The permission table annotates each operation with the
// role it needs (x-sluice-role) and whether tenant principals may call it.
func renderOpenAPI(version string, withMCP bool) []byte {
	if version == "" {
		version = "dev"
	}
	doc := obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":       "sluice",
			"version":     version,
			"description": "The sluice control plane: submit pipeline runs, follow them, cancel, roll back and inspect them.",
			"license":     obj{"name": "Apache-2.0", "identifier": "Apache-2.0"},
		},
		// A generated client points at its own server; this is the address serve listens
		// on unless --listen says otherwise.
		"servers":  []any{obj{"url": "http://127.0.0.1:8080", "description": "sluice serve on its default --listen address"}},
		"tags":     tags(),
		"security": []any{obj{"bearer": []any{}}},
		"paths":    merge(paths(), templatePaths(), schedulePaths(), changeRequestPaths()),
		"components": obj{
			"securitySchemes": obj{"bearer": obj{"type": "http", "scheme": "bearer",
				"description": "a token of --auth-token, --auth-config, or the one serve generates into <data-dir>/auth-token"}},
			"schemas": merge(schemas(), scheduleSchemas(), templateSchemas(), changeRequestSchemas(), documentSchemas()),
		},
	}
	if withMCP {
		for k, v := range mcpPaths() {
			doc["paths"].(obj)[k] = v
		}
	}
	annotate(doc["paths"].(obj))
	nameOperations(doc["paths"].(obj))
	addExamples(doc["paths"].(obj))
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic("openapi document does not encode: " + err.Error()) // static data; a test renders it
	}
	return b
}

// annotate adds the permission of each operation and marks the open routes.
func annotate(ps obj) {
	perms := permissionTable()
	for path, item := range ps {
		route := ginPath(path)
		for method, op := range item.(obj) {
			o := op.(obj)
			m := strings.ToUpper(method)
			// Every path answers another method with 405 and Allow (/mcp's own 405 aside).
			if _, own := o["responses"].(obj)["405"]; !own {
				addErrors(o, "method_not_allowed")
			}
			if openRoute(route) {
				o["security"] = []any{}
				continue
			}
			p, ok := perms[m+" "+route]
			if !ok {
				p = Permission{Role: "admin"}
			}
			o["x-sluice-role"] = string(p.Role)
			o["x-sluice-tenant"] = p.Tenant
			addErrors(o, "unauthorized", "forbidden")
		}
	}
}

// ginPath turns /v1/runs/{id} into the router's /v1/runs/:id.
func ginPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			parts[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(parts, "/")
}

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func nullable(s obj) obj { return obj{"oneOf": []any{s, obj{"type": "null"}}} }

func typ(t string, desc string) obj {
	o := obj{"type": t}
	if desc != "" {
		o["description"] = desc
	}
	return o
}

func nullableType(t, desc string) obj {
	o := obj{"type": []any{t, "null"}}
	if desc != "" {
		o["description"] = desc
	}
	return o
}

func timestamp(desc string) obj {
	o := nullableType("string", desc)
	o["format"] = "date-time"
	return o
}

func jsonBody(schema obj, desc string) obj {
	return obj{"description": desc, "content": obj{"application/json": obj{"schema": schema}}}
}

func param(name, in, desc string, schema obj) obj {
	p := obj{"name": name, "in": in, "description": desc, "schema": schema}
	if in == "path" {
		p["required"] = true
	}
	return p
}

func idParam() obj { return param("id", "path", "the run id", typ("string", "")) }

// addErrors documents error answers by their codes; codes of one status share a response.
func addErrors(op obj, codes ...string) {
	status := Codes()
	resp := op["responses"].(obj)
	for _, code := range codes {
		key := strconv.Itoa(status[code])
		r, ok := resp[key].(obj)
		if !ok {
			r = jsonBody(ref("ErrorBody"), "")
			r["x-sluice-codes"] = []string{}
			resp[key] = r
		}
		list := r["x-sluice-codes"].([]string)
		if !slices.Contains(list, code) {
			list = append(list, code)
		}
		slices.Sort(list)
		r["x-sluice-codes"] = list
		r["description"] = "error: " + strings.Join(list, ", ")
	}
}

func op(summary string, params []any, responses obj, codes ...string) obj {
	o := obj{"summary": summary, "responses": responses}
	if len(params) > 0 {
		o["parameters"] = params
	}
	addErrors(o, codes...)
	return o
}

func paths() obj {
	listParams := []any{
		param("status", "query", "comma list of statuses (repeatable)", typ("string", "")),
		param("name", "query", "pipeline name", typ("string", "")),
		param("pool", "query", "pool", typ("string", "")),
		param("tenant", "query", "tenant; empty selects untenanted runs", typ("string", "")),
		param("run_key", "query", "run key", typ("string", "")),
		param("label", "query", "k=v, repeatable, all must match", typ("string", "")),
		param("since", "query", "created at or after (RFC 3339)", obj{"type": "string", "format": "date-time"}),
		param("until", "query", "created before (RFC 3339)", obj{"type": "string", "format": "date-time"}),
		param("limit", "query", "page size", obj{"type": "integer", "minimum": 1, "maximum": maxListLimit, "default": defaultListLimit}),
		param("cursor", "query", "next_cursor of the previous page", typ("string", "")),
	}
	yamlParams := []any{
		param("name", "query", "overrides the config's name (raw YAML bodies only)", typ("string", "")),
		param("pool", "query", "pool (raw YAML bodies only)", typ("string", "")),
		param("label", "query", "k=v, repeatable (raw YAML bodies only)", typ("string", "")),
		param("idempotency_key", "query", "idempotency key (raw YAML bodies only)", typ("string", "")),
		param("run_key", "query", "run key (raw YAML bodies only)", typ("string", "")),
		param("timeout_secs", "query", "timeout (raw YAML bodies only)", obj{"type": "integer", "minimum": 0}),
		param("clock", "query", "logical instant (raw YAML bodies only)", obj{"type": "string", "format": "date-time"}),
		param(TraceparentHeader, "header", "W3C trace context of the caller: the request's span and the run's spans on "+
			"whichever member executes it join this trace (stored with the run; ignored when malformed)",
			obj{"type": "string", "pattern": "^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$"}),
	}
	submit := op("Submit a run", yamlParams, obj{
		"202": jsonBody(ref("SubmitResponse"), "the run was created; under --require-approval run the answer is {change_request_id, status: proposed} instead"),
		"200": jsonBody(ref("SubmitResponse"), "an existing run answers (idempotent replay or run_key); replayed is true"),
	}, "invalid_body", "body_too_large", "invalid_config", "invalid_params", "directive_refused", "pool_unserved",
		"state_format_refused", "path_refused", "host_refused", "history_refused", "secret_param_misplaced", "secret_params_refused",
		"idempotency_conflict", "run_deleted", "queue_full", "draining", "history_unavailable")
	submit["requestBody"] = obj{"required": true, "content": obj{
		"application/json": obj{"schema": ref("SubmitRequest")},
		"application/yaml": obj{"schema": typ("string", "the pipeline config itself")},
	}}
	submit["responses"].(obj)["429"].(obj)["headers"] = obj{"Retry-After": obj{
		"description": "seconds to wait: the server's poll interval", "schema": typ("integer", "")}}

	rollback := op("Submit a new run from a run's stored config", []any{idParam()}, obj{
		"202": jsonBody(ref("SubmitResponse"), "the new run was created"),
		"200": jsonBody(ref("SubmitResponse"), "an existing run answers; replayed is true"),
	}, "invalid_body", "body_too_large", "not_found", "invalid_config", "invalid_params", "directive_refused", "pool_unserved",
		"path_refused", "host_refused", "history_refused", "queue_full", "draining", "history_unavailable")
	rollback["requestBody"] = obj{"required": false, "content": obj{"application/json": obj{"schema": ref("RollbackRequest")}}}

	logs := op("Read a run's persisted log lines, or follow them", []any{idParam(),
		param("after", "query", "return lines with seq greater than this", obj{"type": "integer", "minimum": 0, "default": 0}),
		param("limit", "query", "lines per page", obj{"type": "integer", "minimum": 1, "maximum": maxLogLimit, "default": defaultLogLimit}),
		param("follow", "query", "1 streams new lines as server-sent events until the run ends", obj{"type": "string", "enum": []any{"0", "1", "true", "false"}}),
	}, obj{"200": obj{"description": "one page, or with follow=1 an event stream: `line` events (id = seq, data = LogLine), then one `end` event (data = LogStreamEnd) or an `error` event (data = ErrorBody)",
		"content": obj{
			"application/json": obj{"schema": ref("LogsResponse")},
			// Each event's data is JSON: a line, the end, or an error (JSON Schema's
			// contentSchema says so for a string-encoded body).
			"text/event-stream": obj{"schema": obj{"type": "string", "description": "server-sent events",
				"contentMediaType": "application/json",
				"contentSchema":    obj{"oneOf": []any{ref("LogLine"), ref("LogStreamEnd"), ref("ErrorBody")}}}},
		}}}, "invalid_body", "not_found", "history_unavailable")

	return obj{
		"/livez": obj{"get": op("Liveness probe", nil, obj{"200": jsonBody(ref("Liveness"), "the process is alive")})},
		"/readyz": obj{"get": op("Readiness probe", nil, obj{
			"200": jsonBody(ref("Readiness"), "ready to take work"),
			"503": jsonBody(ref("Readiness"), "the history is unreachable or the member is draining"),
		})},
		"/metrics": obj{"get": op("Prometheus metrics", nil, obj{"200": obj{"description": "Prometheus text exposition",
			"content": obj{"text/plain": obj{"schema": typ("string", "")}}}}, "not_found")},
		"/v1/runs": obj{
			"post": submit,
			"get": op("List runs, newest first", listParams, obj{"200": jsonBody(ref("ListResponse"), "one page")},
				"invalid_body", "history_unavailable"),
		},
		"/v1/runs/{id}": obj{
			"get": op("Get a run", []any{idParam()}, obj{"200": jsonBody(ref("Run"), "the run")}, "not_found", "history_unavailable"),
			"delete": op("Delete a terminal run with its shards, logs and sealed rows", []any{idParam()},
				obj{"204": obj{"description": "deleted"}}, "not_found", "run_not_terminal", "invalid_body", "history_unavailable"),
		},
		"/v1/runs/{id}/shards": obj{"get": op("List a run's shards (empty for unsharded runs)", []any{idParam(),
			param("limit", "query", "page size", obj{"type": "integer", "minimum": 1, "maximum": maxListLimit, "default": defaultListLimit}),
			param("cursor", "query", "next_cursor of the previous page", typ("string", "")),
		}, obj{"200": jsonBody(ref("ShardsResponse"), "one page")}, "invalid_body", "not_found", "history_unavailable")},
		"/v1/runs/{id}/config": obj{"get": op("Get a run's stored config, redacted", []any{idParam()},
			obj{"200": jsonBody(ref("ConfigResponse"), "the config")}, "not_found", "history_unavailable")},
		"/v1/runs/{id}/cancel": obj{"post": op("Cancel a run", []any{idParam()}, obj{
			"200": jsonBody(ref("Run"), "the run ended at once (it was queued or pending) or had already ended"),
			"202": jsonBody(ref("Run"), "a running run was signalled; it stops at the next page boundary"),
		}, "invalid_body", "not_found", "history_unavailable")},
		"/v1/runs/{id}/rollback": obj{"post": rollback},
		"/v1/runs/{id}/logs":     obj{"get": logs},
		"/v1/audit": obj{"get": op("Read the audit trail", []any{
			param("after", "query", "continue after this position (next_after of the previous page)", obj{"type": "integer", "minimum": 0, "default": 0}),
			param("limit", "query", "entries per page", obj{"type": "integer", "minimum": 1, "maximum": maxAuditLimit, "default": defaultAuditLimit}),
		}, obj{"200": jsonBody(ref("AuditResponse"), "one page, oldest first")}, "invalid_body", "history_unavailable")},
		"/v1/connectors": obj{"get": op("List connectors with the JSON Schema of their config per role", nil,
			obj{"200": jsonBody(ref("ConnectorsResponse"), "every registered connector")}, "invalid_body")},
		"/v1/openapi.json": obj{"get": op("This document (no token needed)", nil,
			obj{"200": jsonBody(ref("OpenAPIDocument"), "the OpenAPI 3.1 document")})},
	}
}

// errorCodes is the enum of the ErrorBody code, sorted.
func errorCodes() []any {
	codes := make([]string, 0, len(Codes()))
	for c := range Codes() {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	out := make([]any, len(codes))
	for i, c := range codes {
		out[i] = c
	}
	return out
}

// merge adds the entries of parts to into: the paths or schemas of each feature.
func merge(into obj, parts ...obj) obj {
	for _, p := range parts {
		for k, v := range p {
			into[k] = v
		}
	}
	return into
}
