package http

import (
	"slices"

	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// schemas are the components of the OpenAPI document. Property names must equal the JSON
// tags of this package's answers and of adapters/cli/client's DTOs; tests check both.
func schemas() obj {
	str := func(desc string) obj { return typ("string", desc) }
	integer := func(desc string) obj { return typ("integer", desc) }
	boolean := func(desc string) obj { return typ("boolean", desc) }
	object, all := closedObject, propNames
	stringMap := obj{"type": "object", "additionalProperties": obj{"type": "string"}}

	// The package run is shadowed by the Run schema below, so its lists are read first.
	runCodes, callbackOn := enum(run.Codes()), enum(terminalStatuses())
	run := obj{
		"run_id":       str("the run id (UUIDv7)"),
		"name":         str("the pipeline name"),
		"status":       enum(run.Statuses()),
		"pool":         str("the pool the run executes in"),
		"tenant":       nullableType("string", "the tenant; null when untenanted"),
		"labels":       stringMap,
		"trigger_kind": enum(run.TriggerKinds()),
		"run_key":      nullableType("string", "unique per pipeline key; null when none"),
		"run_date":     str("YYYY-MM-DD of the logical instant"),
		"attempt":      integer("claims so far"),
		"max_attempts": integer("the reclaim cap"),
		"owner":        nullable(ref("Owner")),
		"created_at":   timestamp("RFC 3339 UTC"),
		"claimed_at":   timestamp("RFC 3339 UTC; null until claimed"),
		"started_at":   timestamp("RFC 3339 UTC; null until started"),
		"finished_at":  timestamp("RFC 3339 UTC; null until terminal"),
		"stats":        ref("Stats"),
		"error":        nullable(ref("RunError")),
		"shards":       nullable(ref("ShardSummary")),
		"attempts":     obj{"type": "array", "items": ref("Attempt")},
		"template":     nullable(ref("TemplateRef")),
		"retry":        nullable(ref("Retry")),
		"not_before":   timestamp("RFC 3339 UTC; when a pending run waiting for its retry may be claimed again, else null"),
	}
	retry := obj{"max_attempts": obj{"type": "integer", "minimum": 1, "maximum": 100, "description": "attempts in all, the first included (default 3)"},
		"initial_secs": obj{"type": "number", "exclusiveMinimum": 0, "description": "the wait before the first retry, the top of its jitter (default 10)"},
		"max_secs":     obj{"type": "number", "exclusiveMinimum": 0, "maximum": 86400, "description": "the longest wait (default 600)"},
		"multiplier":   obj{"type": "number", "minimum": 1, "description": "growth of each wait over the one before (default 2)"},
		"on": obj{"type": "string", "enum": []any{"transient", "any"},
			"description": "transient: failures a connector marks transient; any: all but config errors, refusals and timeouts (default transient)"}}
	owner := obj{"instance_id": str(""), "listen": str("host:port of the member's API")}
	stats := obj{"rows_read": integer(""), "rows_written": integer(""), "pages": integer(""), "bytes": integer(""), "elapsed_ms": integer("")}
	runErr := obj{"code": runCodes, "message": str("")}
	shards := obj{"total": integer("")}
	for _, st := range shard.Statuses() {
		shards[string(st)] = integer("")
	}
	attempt := obj{"n": integer("1-based"), "instance_id": str(""), "claimed_at": timestamp(""), "ended_at": timestamp("null while the attempt runs"),
		"outcome": obj{"type": []any{"string", "null"}, "enum": []any{"completed", "failed", "cancelled", "lost", "handed_back", nil}},
		"error":   nullable(ref("RunError"))}
	template := obj{"id": str(""), "version": integer("")}
	callback := obj{
		"url":          str("where the result is POSTed"),
		"on":           obj{"type": "array", "items": callbackOn},
		"extra_fields": obj{"type": "object", "description": "merged into the callback payload"},
	}
	submitReq := obj{
		"config":          obj{"oneOf": []any{str("the pipeline as YAML or JSON text"), obj{"type": "object", "description": "the pipeline as a JSON object"}}},
		"name":            str("overrides the config's name"),
		"labels":          stringMap,
		"pool":            str("the pool to execute in"),
		"idempotency_key": str("replays answer the original run"),
		"run_key":         str("unique per pipeline key; a second submit answers the existing run"),
		"timeout_secs":    obj{"type": "integer", "minimum": 0, "description": "running time across attempts; 0 = none"},
		"retry":           ref("RetryRequest"),
		"callback":        ref("Callback"),
		"clock":           obj{"type": "string", "format": "date-time", "description": "the logical instant (RFC 3339)"},
	}
	submitResp := obj{"run_id": str("absent when a change request was made instead"), "status": str("the run's, or proposed"),
		"replayed":          boolean("true when an existing run answered"),
		"change_request_id": str("under --require-approval run: the change request another operator must approve")}
	list := obj{"runs": obj{"type": "array", "items": ref("Run")}, "next_cursor": nullableType("string", "null on the last page")}
	shardList := obj{"shards": obj{"type": "array", "items": ref("Shard")}, "next_cursor": nullableType("string", "null on the last page")}
	shardItem := obj{"index": integer("0-based"),
		"status":       enum(shard.Statuses()),
		"attempt":      integer("claims so far"),
		"max_attempts": integer("the reclaim cap"),
		"owner":        nullable(ref("Owner")),
		"range":        nullable(ref("KeyRange")),
		"stats":        ref("Stats"),
		"error":        nullable(ref("RunError")),
		"claimed_at":   timestamp("RFC 3339 UTC; null until claimed"),
		"finished_at":  timestamp("RFC 3339 UTC; null until terminal")}
	keyRange := obj{"lo": integer("first key"), "hi": integer("last key (inclusive)"), "nulls": boolean("the shard also reads rows whose key is NULL")}
	cfg := obj{"run_id": str(""), "config": str("the stored config, secrets as ${sealed:N}, credentials redacted")}
	logLine := obj{"seq": integer(""), "at": obj{"type": "string", "format": "date-time"}, "level": str(""), "message": str(""),
		"attrs": obj{"type": "object"}}
	logs := obj{"lines": obj{"type": "array", "items": ref("LogLine")}, "next_after": integer("the after value of the next page"),
		"done": boolean("the run is terminal and every line was returned")}
	streamEnd := obj{"run_id": str(""), "status": str("the run's final status")}
	audit := obj{"at": obj{"type": "string", "format": "date-time"}, "actor": str("a principal name or system"), "action": str(""),
		"run_id": nullableType("string", ""), "details": obj{"type": "object"}}
	auditResp := obj{"entries": obj{"type": "array", "items": ref("AuditEntry")}, "next_after": integer("the after value of the next page")}
	connector := obj{"type": str(""), "description": str(""),
		"roles":        obj{"type": "array", "items": obj{"type": "string", "enum": []any{"source", "sink"}}},
		"exactly_once": boolean("the sink supports delivery: exactly_once"), "shardable": boolean("the source can be sharded"),
		"schemas": obj{"type": "object", "description": "a JSON Schema (2020-12) of the config block per role",
			"additionalProperties": obj{"type": "object"}}}
	member := obj{"instance_id": str(""), "listen": str(""), "pools": nullableArray(), "in_flight": integer(""), "max_concurrent": integer("")}
	cluster := obj{"enabled": boolean(""), "instances": integer(""), "pools": nullableArray(), "members": obj{"type": "array", "items": ref("Member")}}
	ready := obj{"status": str(""), "history_ok": boolean(""), "queue_ok": boolean(""), "draining": boolean(""), "cluster": ref("Cluster")}
	errPayload := obj{"code": obj{"type": "string", "enum": errorCodes()}, "message": str("for people; never holds secrets"),
		"details":    obj{"type": "object", "description": "invalid_config, invalid_params: {errors: [{path, message, line?, column?, param?}]}"},
		"request_id": str("the request's X-Request-Id (the client's when it sent a valid one): its lines in the server log carry it")}

	return obj{
		"Run":             object(all(run), run),
		"Owner":           object(all(owner), owner),
		"Stats":           object(all(stats), stats),
		"RunError":        object(all(runErr), runErr),
		"ShardSummary":    object(all(shards), shards),
		"Attempt":         object(all(attempt), attempt),
		"Retry":           object(all(retry), retry),
		"RetryRequest":    object(nil, retry),
		"TemplateRef":     object(all(template), template),
		"Callback":        object([]string{"url"}, callback),
		"SubmitRequest":   object([]string{"config"}, submitReq),
		"SubmitResponse":  object([]string{"status"}, submitResp),
		"RollbackRequest": object(nil, obj{"config": submitReq["config"]}),
		"ListResponse":    object(all(list), list),
		"ShardsResponse":  object(all(shardList), shardList),
		"Shard":           object(all(shardItem), shardItem),
		"KeyRange":        object(all(keyRange), keyRange),
		"ConfigResponse":  object(all(cfg), cfg),
		"LogLine":         object([]string{"seq", "at", "level", "message"}, logLine),
		"LogsResponse":    object(all(logs), logs),
		"LogStreamEnd":    object(all(streamEnd), streamEnd),
		"AuditEntry":      object(all(audit), audit),
		"AuditResponse":   object(all(auditResp), auditResp),
		"Connector":       object(all(connector), connector),
		"ConnectorsResponse": object([]string{"connectors"},
			obj{"connectors": obj{"type": "array", "items": ref("Connector")}}),
		"Member":       object(all(member), member),
		"Cluster":      object(all(cluster), cluster),
		"Readiness":    object(all(ready), ready),
		"ErrorPayload": object([]string{"code", "message"}, errPayload),
		"ErrorBody":    object([]string{"error"}, obj{"error": ref("ErrorPayload")}),
	}
}

func nullableArray() obj {
	return obj{"type": []any{"array", "null"}, "items": obj{"type": "string"}}
}

// closedObject is an object schema of exactly props; required nil requires none.
func closedObject(required []string, props obj) obj {
	o := obj{"type": "object", "properties": props, "additionalProperties": false}
	if required != nil {
		o["required"] = required
	}
	return o
}

// propNames is every property name of props, sorted.
func propNames(props obj) []string {
	out := make([]string, 0, len(props))
	for k := range props {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
