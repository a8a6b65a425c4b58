package http

// schedulePaths documents the schedule and backfill routes (SPEC §9.1, §9.2, §9.4).
func schedulePaths() obj {
	sid := param("id", "path", "the schedule id", typ("string", ""))
	tid := param("id", "path", "the template id", typ("string", ""))
	one := func(desc string) obj { return obj{"200": jsonBody(ref("Schedule"), desc)} }

	create := op("Create a schedule on a template", []any{tid},
		obj{"201": jsonBody(ref("Schedule"), "created; ticks start at start_date, or after now")},
		"invalid_body", "body_too_large", "not_found", "invalid_config", "invalid_params", "vault_key_required", "history_unavailable")
	create["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": ref("ScheduleRequest")}}}

	backfill := op("Run a template or config once per window of a time range", nil,
		obj{"202": jsonBody(ref("BackfillResponse"), "one run per window; posting the same backfill again answers the same runs. "+
			"Under --require-approval run: the one change request that creates the windows when approved, and no run")},
		"invalid_body", "body_too_large", "not_found", "invalid_config", "invalid_params", "directive_refused", "pool_unserved",
		"vault_key_required", "secret_params_refused", "path_refused", "host_refused", "history_refused", "queue_full", "draining", "history_unavailable")
	backfill["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": ref("BackfillRequest")}}}

	return obj{
		"/v1/backfill":                 obj{"post": backfill},
		"/v1/templates/{id}/schedules": obj{"post": create},
		"/v1/schedules": obj{"get": op("List schedules, oldest first", nil,
			obj{"200": jsonBody(ref("SchedulesResponse"), "every schedule")}, "invalid_body", "history_unavailable")},
		"/v1/schedules/preview": obj{"get": op("List the next instants a cron expression fires at", []any{
			param("cron", "query", "five fields or a macro (@hourly, @daily, @weekly, @monthly, @yearly, @annually)", typ("string", "")),
			param("timezone", "query", "IANA zone; default the server's --timezone", typ("string", "")),
			param("from", "query", "instants strictly after this (RFC 3339); default now", obj{"type": "string", "format": "date-time"}),
			param("count", "query", "how many", obj{"type": "integer", "minimum": 1, "maximum": 1000, "default": 5}),
		}, obj{"200": jsonBody(ref("SchedulePreview"), "the instants, in UTC and local time")}, "invalid_body")},
		"/v1/schedules/{id}": obj{
			"get": op("Get a schedule", []any{sid}, one("the schedule"), "invalid_body", "not_found", "history_unavailable"),
			"delete": op("Delete a schedule with its ticks (its runs stay)", []any{sid},
				obj{"204": obj{"description": "deleted"}}, "invalid_body", "not_found", "history_unavailable"),
		},
		"/v1/schedules/{id}/pause": obj{"post": op("Pause a schedule: due ticks are recorded skipped (paused)", []any{sid},
			one("the paused schedule"), "invalid_body", "not_found", "history_unavailable")},
		"/v1/schedules/{id}/resume": obj{"post": op("Resume a paused schedule from its next tick", []any{sid},
			one("the schedule"), "invalid_body", "not_found", "history_unavailable")},
		"/v1/schedules/{id}/ticks": obj{"get": op("List a schedule's ticks, newest first", []any{sid,
			param("before", "query", "ticks with instants before this (next_before of the previous page)", obj{"type": "string", "format": "date-time"}),
			param("limit", "query", "page size", obj{"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}),
		}, obj{"200": jsonBody(ref("TicksResponse"), "one page")}, "invalid_body", "not_found", "history_unavailable")},
	}
}

func scheduleSchemas() obj {
	str := func(desc string) obj { return typ("string", desc) }
	stringMap := obj{"type": "object", "additionalProperties": obj{"type": "string"}}
	overlap := obj{"type": "string", "enum": []any{"skip", "queue"}}
	request := obj{
		"cron":             str("five fields (minute hour day-of-month month weekday) or a macro"),
		"timezone":         str("IANA zone the cron is read in; default the server's --timezone"),
		"start_date":       str("local date (YYYY-MM-DD, inclusive) of the first tick; default: after creation"),
		"catchup":          typ("boolean", "create missed ticks (up to max_catchup_runs) instead of only the latest; default false"),
		"max_catchup_runs": obj{"type": "integer", "minimum": 1, "maximum": 1000, "default": 1},
		"overlap_policy":   obj{"type": "string", "enum": []any{"skip", "queue"}, "default": "skip"},
		"params":           obj{"type": "object", "description": "template params: string, number or boolean values"},
		"pool":             str("the pool its runs execute in"),
		"labels":           stringMap,
	}
	sched := obj{
		"id": str(""), "template_id": str(""), "cron": str(""), "timezone": str(""),
		"start_date": nullableType("string", "null: ticks after creation"), "catchup": typ("boolean", ""),
		"max_catchup_runs": typ("integer", ""), "overlap_policy": overlap,
		"params": obj{"type": "object", "description": "the params; values of secret params read (secret)",
			"additionalProperties": obj{"type": "string"}},
		"pool": nullableType("string", ""), "labels": stringMap, "paused": typ("boolean", ""),
		"created_by": str(""), "created_at": timestamp("RFC 3339 UTC"),
		"last_tick": timestamp("the newest recorded tick; null before the first"),
		"next_tick": timestamp("the next instant the cron fires at; null when it never fires again"),
	}
	tick := obj{
		"instant":       timestamp("the tick's instant"),
		"status":        obj{"type": "string", "enum": []any{"created", "queued", "skipped"}},
		"reason":        nullableType("string", "why it was skipped: missed while no scheduler was running, previous run still active, paused, pool unserved: NAME"),
		"run_id":        nullableType("string", "the tick's run; null when skipped"),
		"summary_count": nullableType("integer", "set on a row that stands for that many older missed ticks"),
		"summary_first": timestamp("the first of the missed ticks a summary row stands for"),
		"created_at":    timestamp("when it was recorded"),
	}
	ticks := obj{"ticks": obj{"type": "array", "items": ref("Tick")},
		"next_before": nullableType("string", "the before value of the next page; null on the last")}
	instant := obj{"utc": str("RFC 3339 UTC"), "local": str("RFC 3339 with the zone's offset"), "zone": str("the zone's abbreviation then")}
	preview := obj{"cron": str("the expression, normalised"), "timezone": str(""), "from": timestamp(""),
		"instants": obj{"type": "array", "items": ref("PreviewInstant")}}
	list := obj{"schedules": obj{"type": "array", "items": ref("Schedule")}}
	bfReq := obj{
		"template": str("a template id (or give config)"),
		"config": obj{"oneOf": []any{str("the pipeline as YAML or JSON text"),
			obj{"type": "object", "description": "the pipeline as a JSON object"}}},
		"params":     obj{"type": "object", "description": "template params"},
		"from":       obj{"type": "string", "format": "date-time", "description": "start of the first window (RFC 3339)"},
		"to":         obj{"type": "string", "format": "date-time", "description": "end of the last window (RFC 3339)"},
		"window":     str("ISO 8601 duration stepped in wall time, e.g. P1D, PT6H, P1M; at most 10,000 windows"),
		"timezone":   str("IANA zone the windows step in; default the server's --timezone"),
		"pool":       str("the pool its runs execute in"),
		"max_active": obj{"type": "integer", "minimum": 1, "maximum": 1000, "default": 1},
	}
	bfRun := obj{"run_id": str(""), "start": timestamp("window start, inclusive"), "end": timestamp("window end, exclusive")}
	bfResp := obj{"backfill_id": str("the same for the same request; its runs carry the label backfill_id"),
		"runs":              obj{"type": "array", "items": ref("BackfillRun"), "description": "absent while proposed"},
		"change_request_id": str("under --require-approval run: the change request whose approval creates the windows"),
		"status":            obj{"type": "string", "enum": []any{"proposed"}, "description": "proposed, with change_request_id"}}
	return obj{
		"ScheduleRequest":   closedObject([]string{"cron"}, request),
		"Schedule":          closedObject(propNames(sched), sched),
		"Tick":              closedObject(propNames(tick), tick),
		"TicksResponse":     closedObject(propNames(ticks), ticks),
		"PreviewInstant":    closedObject(propNames(instant), instant),
		"SchedulePreview":   closedObject(propNames(preview), preview),
		"SchedulesResponse": closedObject(propNames(list), list),
		"BackfillRequest":   closedObject([]string{"from", "to", "window"}, bfReq),
		"BackfillRun":       closedObject(propNames(bfRun), bfRun),
		"BackfillResponse":  closedObject([]string{"backfill_id"}, bfResp),
	}
}
