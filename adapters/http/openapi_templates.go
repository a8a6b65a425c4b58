package http

// templatePaths documents the template, fan-out and tenant routes (SPEC §8).
func templatePaths() obj {
	tid := param("id", "path", "the template id", typ("string", ""))
	tenant := param("tenant", "path", "the tenant the run is stamped with", typ("string", ""))
	object := func(desc string) obj { return typ("object", desc) }
	runBody := obj{"required": false, "content": obj{"application/json": obj{"schema": object(
		"{params?: {name: string|number|bool}, pool?, labels?, idempotency_key?, run_key?, callback?}")}}}
	started := obj{
		"202": jsonBody(ref("SubmitResponse"), "the run was created"),
		"200": jsonBody(ref("SubmitResponse"), "an existing run answers; replayed is true"),
	}
	runCodes := []string{"invalid_body", "body_too_large", "not_found", "invalid_config", "directive_refused",
		"pool_unserved", "pool_override_denied", "vault_key_required", "state_format_refused",
		"secret_param_misplaced", "secret_params_refused", "idempotency_conflict", "run_deleted", "queue_full", "draining", "history_unavailable"}

	register := op("Register a template, or the next version of an existing id", nil,
		obj{"201": jsonBody(object("the template: id, version, pool, pool_override, tenants, params"), "registered")},
		"invalid_body", "body_too_large", "invalid_config", "secret_param_misplaced", "history_unavailable")
	register["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": object(
		"{id, config, pool?, pool_override?: true | [pools], tenants?: [names] | \"*\"}")}}}

	run := op("Start a run of the template's newest version", []any{tid}, started, runCodes...)
	run["requestBody"] = runBody
	tenantRun := op("Start a tenant's run of the template", []any{tenant, tid}, started, runCodes...)
	tenantRun["requestBody"] = runBody
	fanout := op("Start one run per entry", []any{tid},
		obj{"202": jsonBody(object("{runs: [{run_id, status, replayed} | {error: {code, message}}]}"), "one answer per entry, in order")},
		"invalid_body", "body_too_large", "not_found", "history_unavailable")
	fanout["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": object(
		"{runs: [{params, labels?}], pool?}")}}}

	return obj{
		"/v1/templates": obj{
			"post": register,
			"get": op("List templates (newest versions)", nil,
				obj{"200": jsonBody(object("{templates: [...]}"), "every template")}, "history_unavailable"),
		},
		"/v1/templates/{id}": obj{
			"get": op("Get a template's newest version", []any{tid},
				obj{"200": jsonBody(object("the template"), "the template")}, "not_found", "history_unavailable"),
			"delete": op("Delete every version of a template", []any{tid}, obj{"204": obj{"description": "deleted"}},
				"not_found", "template_in_use", "history_unavailable"),
		},
		"/v1/templates/{id}/runs":                  obj{"post": run},
		"/v1/templates/{id}/fanout":                obj{"post": fanout},
		"/v1/tenants/{tenant}/templates/{id}/runs": obj{"post": tenantRun},
	}
}
