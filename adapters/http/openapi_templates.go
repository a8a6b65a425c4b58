package http

// templatePaths documents the template, fan-out and tenant routes (SPEC §8).
func templatePaths() obj {
	tid := param("id", "path", "the template id", typ("string", ""))
	tenant := param("tenant", "path", "the tenant the run is stamped with", typ("string", ""))
	runBody := obj{"required": false, "content": obj{"application/json": obj{"schema": ref("TemplateRunRequest"),
		"example": obj{"params": obj{"day": "2026-12-01"}, "labels": obj{"team": "data"}, "run_key": "2026-12-01"}}}}
	started := obj{
		"202": jsonBody(ref("SubmitResponse"), "the run was created"),
		"200": jsonBody(ref("SubmitResponse"), "an existing run answers; replayed is true"),
	}
	runCodes := []string{"invalid_body", "body_too_large", "not_found", "invalid_config", "invalid_params", "directive_refused",
		"pool_unserved", "pool_override_denied", "vault_key_required", "state_format_refused",
		"path_refused", "host_refused", "history_refused", "secret_param_misplaced", "secret_params_refused",
		"idempotency_conflict", "run_deleted", "queue_full", "draining", "history_unavailable"}

	register := op("Register a template, or the next version of an existing id", nil,
		obj{"201": jsonBody(ref("Template"), "registered")},
		"invalid_body", "body_too_large", "invalid_config", "secret_param_misplaced", "history_unavailable")
	register["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": ref("TemplateRequest"),
		"example": obj{"id": "orders-export", "config": "version: 1\nname: orders-export\nparams:\n  day: {type: string, required: true}\n" +
			"pipeline:\n  source: {type: file, config: {path: orders.csv}}\n  sink: {type: file, config: {path: \"orders-${param.day}.jsonl\"}}\n",
			"tenants": []any{"acme"}}}}}

	run := op("Start a run of the template's newest version", []any{tid}, started, runCodes...)
	run["requestBody"] = runBody
	tenantRun := op("Start a tenant's run of the template", []any{tenant, tid}, started, runCodes...)
	tenantRun["requestBody"] = runBody
	fanout := op("Start one run per entry", []any{tid},
		obj{"202": jsonBody(ref("FanoutResponse"), "one answer per entry, in order")},
		"invalid_body", "body_too_large", "not_found", "history_unavailable")
	fanout["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": ref("FanoutRequest"),
		"example": obj{"runs": []any{obj{"params": obj{"day": "2026-12-01"}}, obj{"params": obj{"day": "2026-12-02"}}}}}}}

	return obj{
		"/v1/templates": obj{
			"post": register,
			"get": op("List templates (newest versions)", nil,
				obj{"200": jsonBody(ref("TemplateList"), "every template")}, "history_unavailable"),
		},
		"/v1/templates/{id}": obj{
			"get": op("Get a template's newest version", []any{tid},
				obj{"200": jsonBody(ref("Template"), "the template")}, "not_found", "history_unavailable"),
			"delete": op("Delete every version of a template", []any{tid}, obj{"204": obj{"description": "deleted"}},
				"not_found", "template_in_use", "history_unavailable"),
		},
		"/v1/templates/{id}/runs":                  obj{"post": run},
		"/v1/templates/{id}/fanout":                obj{"post": fanout},
		"/v1/tenants/{tenant}/templates/{id}/runs": obj{"post": tenantRun},
	}
}

// templateSchemas are the bodies of the template routes. Property names equal the JSON
// tags of registerBody, templateRunBody, fanoutBody and templateView (tests check).
func templateSchemas() obj {
	str := func(desc string) obj { return typ("string", desc) }
	stringMap := obj{"type": "object", "additionalProperties": obj{"type": "string"}}
	paramValue := obj{"oneOf": []any{typ("string", ""), typ("number", ""), typ("boolean", "")}}
	params := obj{"type": "object", "description": "values of the template's params, by name",
		"additionalProperties": paramValue}
	pools := obj{"oneOf": []any{typ("boolean", "true: a run may ask for any pool"),
		obj{"type": "array", "items": obj{"type": "string"}, "description": "the pools a run may ask for"}}}
	tenants := obj{"oneOf": []any{obj{"type": "string", "enum": []any{"*"}, "description": "every tenant"},
		obj{"type": "array", "items": obj{"type": "string"}, "description": "the tenants whose route may run it"}}}
	request := obj{
		"id":            str("the template id; re-registering an id makes its next version"),
		"config":        obj{"oneOf": []any{str("the pipeline config as YAML or JSON text, with a params block"), obj{"type": "object", "description": "the pipeline as a JSON object", "additionalProperties": true}}},
		"pool":          str("the pool its runs execute in (default: the config's, then default)"),
		"pool_override": pools,
		"tenants":       tenants,
	}
	paramView := obj{
		"name":        str("the param's name"),
		"type":        obj{"type": "string", "enum": []any{"string", "int", "float", "bool", "date", "datetime"}},
		"required":    typ("boolean", "a run must pass it"),
		"default":     obj{"description": "used when a run does not pass it; null for secret params", "oneOf": []any{paramValue, obj{"type": "null"}}},
		"secret":      typ("boolean", "its value is sealed and never shown"),
		"description": str("what the param means"),
		"enum":        obj{"type": "array", "items": paramValue, "description": "the only values accepted"},
		"pattern":     str("an RE2 expression the whole value must match"),
		"min":         obj{"description": "the smallest value accepted (numbers, dates, datetimes)", "oneOf": []any{typ("string", ""), typ("number", "")}},
		"max":         obj{"description": "the largest value accepted (numbers, dates, datetimes)", "oneOf": []any{typ("string", ""), typ("number", "")}},
		"max_length":  typ("integer", "the longest string accepted, in characters"),
	}
	template := obj{
		"id": str(""), "version": typ("integer", "the newest version"),
		"pool":          nullableType("string", "the template's pool, or null"),
		"pool_override": obj{"oneOf": []any{typ("boolean", ""), obj{"type": "array", "items": obj{"type": "string"}}}},
		"tenants":       obj{"oneOf": []any{obj{"type": "string", "enum": []any{"*"}}, obj{"type": "array", "items": obj{"type": "string"}}}},
		"params":        obj{"type": "array", "items": ref("TemplateParam")},
		"created_by":    str("the principal that registered this version"),
		"created_at":    obj{"type": "string", "format": "date-time"},
	}
	runReq := obj{
		"params": params, "pool": str("a pool the template's pool_override allows"), "labels": stringMap,
		"idempotency_key": str("replays answer the original run"),
		"run_key":         str("unique per pipeline: a second run answers the existing one"),
		"callback":        ref("Callback"),
	}
	entry := obj{"params": params, "labels": stringMap}
	fanReq := obj{"runs": obj{"type": "array", "items": ref("FanoutEntry"), "minItems": 1}, "pool": str("the pool every run executes in")}
	result := obj{
		"run_id": str("the run, when one was created or answered"), "status": str("the run's status, or proposed"),
		"replayed": typ("boolean", "an existing run answered"), "change_request_id": str("under --require-approval run"),
		"error": ref("ErrorPayload"),
	}
	return obj{
		"TemplateRequest":    closedObject([]string{"id", "config"}, request),
		"TemplateParam":      closedObject([]string{"name", "type", "required", "secret"}, paramView),
		"Template":           closedObject([]string{"id", "version", "params"}, template),
		"TemplateList":       closedObject([]string{"templates"}, obj{"templates": obj{"type": "array", "items": ref("Template")}}),
		"TemplateRunRequest": closedObject(nil, runReq),
		"FanoutEntry":        closedObject(nil, entry),
		"FanoutRequest":      closedObject([]string{"runs"}, fanReq),
		"FanoutResult":       closedObject(nil, result),
		"FanoutResponse":     closedObject([]string{"runs"}, obj{"runs": obj{"type": "array", "items": ref("FanoutResult")}}),
	}
}
