package mcp

import (
	"cmp"
	"slices"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// runView is a run as REST shows it (SPEC §14.7: one run shape on every transport).
type runView = runs.View

func toRunView(r *runs.Record, redact func(string) string) runView { return runs.NewView(r, redact) }

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// templateView is a template's settings and params, never its config.
type templateView struct {
	ID      string      `json:"id" jsonschema:"the template id, for run_template"`
	Version int         `json:"version" jsonschema:"the newest version"`
	Pool    string      `json:"pool,omitempty" jsonschema:"the pool its runs execute in, when set"`
	Params  []paramView `json:"params" jsonschema:"the params run_template accepts"`
}

type paramView struct {
	Name        string `json:"name" jsonschema:"the param's name, a key of params"`
	Type        string `json:"type" jsonschema:"string, int, float, bool, date (YYYY-MM-DD) or datetime (RFC 3339)"`
	Required    bool   `json:"required" jsonschema:"whether a run must pass it"`
	Default     any    `json:"default,omitempty" jsonschema:"the value used when the param is not passed (never shown for secret params)"`
	Secret      bool   `json:"secret" jsonschema:"whether its value is sealed and never shown"`
	Description string `json:"description,omitempty" jsonschema:"what the param means"`
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
