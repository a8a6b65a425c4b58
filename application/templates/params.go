package templates

import "github.com/sluicehq/sluice/domain/pipeline"

// ParamView is a declared param as every answer shows it (REST, MCP): values in their
// JSON form, a secret param's default and allowed values hidden, and max_length the
// bound that applies (a string's default one when none is declared). Transports convert
// it to their own type with the same fields.
type ParamView struct {
	Name        string
	Type        string
	Required    bool
	Default     any
	Secret      bool
	Description string
	Enum        []any
	Pattern     string
	Min, Max    any
	MaxLength   int
}

// ShowParam is p as answers show it.
func ShowParam(p pipeline.Param) ParamView {
	v := ParamView{Name: p.Name, Type: string(p.Type), Required: p.Required, Secret: p.Secret,
		Description: p.Description, Pattern: p.Pattern, Min: pipeline.JSONValue(p.Min),
		Max: pipeline.JSONValue(p.Max), MaxLength: p.MaxLength}
	if p.Type == pipeline.ParamString && v.MaxLength == 0 {
		v.MaxLength = pipeline.DefaultMaxLength
	}
	if p.Secret {
		return v
	}
	v.Default = pipeline.JSONValue(p.Default)
	for _, e := range p.Enum {
		v.Enum = append(v.Enum, pipeline.JSONValue(e))
	}
	return v
}
