package pipeline

// SchemaDialect is the JSON Schema draft the connector schemas follow.
const SchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// JSONSchema renders the config schema of a connector in one role from the same Spec that
// validates configs, so the documented schema and the validator cannot drift apart. Like
// the validator it is closed: keys it does not list are refused.
func JSONSchema(spec Spec, role Role) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range FieldsFor(spec, role) {
		p := map[string]any{}
		switch f.Type {
		case FieldStrings:
			p["type"] = "array"
			p["items"] = map[string]any{"type": "string"}
		default:
			p["type"] = string(f.Type)
		}
		if f.Description != "" {
			p["description"] = f.Description
		}
		if f.Default != nil {
			p["default"] = normalize(f.Default)
		}
		if len(f.Enum) > 0 {
			enum := make([]any, len(f.Enum))
			for i, e := range f.Enum {
				enum[i] = e
			}
			if f.Type == FieldStrings {
				p["items"].(map[string]any)["enum"] = enum
			} else {
				p["enum"] = enum
			}
		}
		if f.Min != nil {
			p["minimum"] = *f.Min
		}
		if f.Secret {
			// An annotation only: clients should not display the value back.
			p["writeOnly"] = true
		}
		props[f.Name] = p
		if f.Required {
			required = append(required, f.Name)
		}
	}
	s := map[string]any{
		"$schema":              SchemaDialect,
		"title":                spec.Type + " " + role.String(),
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
	if spec.Description != "" {
		s["description"] = spec.Description
	}
	return s
}
