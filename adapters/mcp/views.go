package mcp

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// runView is a run as the tools show it: the fields of the REST run resource (SPEC §2.9),
// never the config. Times are RFC 3339 UTC, "" when not reached yet.
type runView struct {
	RunID       string            `json:"run_id"`
	Name        string            `json:"name"`
	Status      string            `json:"status" jsonschema:"pending, queued, running, sharded, completed, failed or cancelled"`
	Pool        string            `json:"pool"`
	Tenant      string            `json:"tenant,omitempty"`
	Labels      map[string]string `json:"labels"`
	TriggerKind string            `json:"trigger_kind"`
	RunKey      string            `json:"run_key,omitempty"`
	RunDate     string            `json:"run_date"`
	Attempt     int               `json:"attempt"`
	MaxAttempts int               `json:"max_attempts"`
	Owner       string            `json:"owner,omitempty" jsonschema:"instance id of the member running it"`
	CreatedAt   string            `json:"created_at,omitempty"`
	StartedAt   string            `json:"started_at,omitempty"`
	FinishedAt  string            `json:"finished_at,omitempty"`
	Stats       statsView         `json:"stats"`
	Error       *runErrorView     `json:"error,omitempty" jsonschema:"why the run failed; absent unless it failed"`
	Template    string            `json:"template,omitempty" jsonschema:"id@version of the template it materializes"`
}

type statsView struct {
	RowsRead    int64 `json:"rows_read"`
	RowsWritten int64 `json:"rows_written"`
	Pages       int64 `json:"pages"`
	Bytes       int64 `json:"bytes"`
	ElapsedMS   int64 `json:"elapsed_ms"`
}

type runErrorView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func toRunView(r *runs.Record, redact func(string) string) runView {
	out := runView{
		RunID: r.ID, Name: r.Name, Status: r.Status, Pool: r.Pool, Tenant: r.Tenant, Labels: r.Labels,
		TriggerKind: r.TriggerKind, RunKey: r.RunKey, RunDate: r.RunDate, Attempt: r.Attempt,
		MaxAttempts: r.MaxAttempts, Owner: r.Owner, CreatedAt: stamp(r.CreatedAt),
		StartedAt: stamp(r.StartedAt), FinishedAt: stamp(r.FinishedAt),
		Stats: statsView{RowsRead: r.Stats.RowsRead, RowsWritten: r.Stats.RowsWritten, Pages: r.Stats.Pages,
			Bytes: r.Stats.Bytes, ElapsedMS: r.Stats.ElapsedMS},
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if r.ErrorCode != "" {
		out.Error = &runErrorView{Code: r.ErrorCode, Message: redact(r.ErrorMessage)}
	}
	if r.TemplateID != "" {
		out.Template = r.TemplateID + "@" + strconv.Itoa(r.TemplateVersion)
	}
	return out
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// templateView is a template's settings and params, never its config.
type templateView struct {
	ID      string      `json:"id"`
	Version int         `json:"version"`
	Pool    string      `json:"pool,omitempty"`
	Params  []paramView `json:"params" jsonschema:"the params run_template accepts"`
}

type paramView struct {
	Name        string `json:"name"`
	Type        string `json:"type" jsonschema:"string, int, float, bool, date (YYYY-MM-DD) or datetime (RFC 3339)"`
	Required    bool   `json:"required"`
	Default     any    `json:"default,omitempty" jsonschema:"the value used when the param is not passed (never shown for secret params)"`
	Secret      bool   `json:"secret"`
	Description string `json:"description,omitempty"`
	Enum        []any  `json:"enum,omitempty" jsonschema:"the only values the param accepts"`
	Pattern     string `json:"pattern,omitempty" jsonschema:"an RE2 expression the whole value must match"`
	Min         any    `json:"min,omitempty" jsonschema:"the smallest value accepted (numbers, dates, datetimes)"`
	Max         any    `json:"max,omitempty" jsonschema:"the largest value accepted (numbers, dates, datetimes)"`
	MaxLength   int    `json:"max_length,omitempty" jsonschema:"the longest string accepted, in characters"`
}

func toTemplateView(v *templates.View) templateView {
	out := templateView{ID: v.ID, Version: v.Version, Pool: v.Pool, Params: []paramView{}}
	for _, p := range v.Params {
		out.Params = append(out.Params, paramView(templates.ShowParam(p)))
	}
	return out
}

// connectorView is a connector with the JSON Schema of its config per role.
type connectorView struct {
	Type        string                    `json:"type"`
	Description string                    `json:"description"`
	Roles       []string                  `json:"roles" jsonschema:"source and/or sink"`
	ExactlyOnce bool                      `json:"exactly_once"`
	Shardable   bool                      `json:"shardable"`
	Schemas     map[string]map[string]any `json:"schemas" jsonschema:"the JSON Schema of the connector's config, keyed by role"`
}

func toConnectorViews(specs []pipeline.Spec) []connectorView {
	out := make([]connectorView, 0, len(specs))
	for _, spec := range specs {
		v := connectorView{Type: spec.Type, Description: spec.Description, Roles: []string{},
			ExactlyOnce: spec.ExactlyOnce, Shardable: spec.Shardable, Schemas: map[string]map[string]any{}}
		for _, role := range []pipeline.Role{pipeline.RoleSource, pipeline.RoleSink} {
			if spec.Roles&role != 0 {
				v.Roles = append(v.Roles, role.String())
				v.Schemas[role.String()] = pipeline.JSONSchema(spec, role)
			}
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b connectorView) int { return cmp.Compare(a.Type, b.Type) })
	return out
}
