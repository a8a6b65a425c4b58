package pipeline

import (
	"fmt"
	"strings"
)

// connector validates a {type, config} block for role and returns it with defaults applied.
// spec is the connector's Spec when the type is known and can play the role.
func (c *checker) connector(n *Node, path string, role Role, cat Catalog) (Connector, *Spec) {
	var out Connector
	if n == nil || n.Kind == KindNull {
		c.add(path, c.parentPos(path), "required: a {type, config} block")
		return out, nil
	}
	fields, ok := c.mapFields(n, path, []string{"type", "config"})
	if !ok {
		return out, nil
	}
	typPath := Join(path, "type")
	v, st := c.value(fields["type"], typPath, FieldString)
	switch st {
	case absent:
		c.add(typPath, n.Pos, "required (known %s types: %s)", role, strings.Join(cat.Types(role), ", "))
		return out, nil
	case valid:
		out.Type = v.(string)
	default:
		return out, nil
	}
	spec, found := cat.Spec(out.Type)
	typePos := fields["type"].Pos
	if !found {
		c.add(typPath, typePos, "unknown %s type %q (known %s types: %s)", role, out.Type, role, strings.Join(cat.Types(role), ", "))
		return out, nil
	}
	if spec.Roles&role == 0 {
		c.add(typPath, typePos, "connector %q cannot be a %s (known %s types: %s)", out.Type, role, role, strings.Join(cat.Types(role), ", "))
		return out, nil
	}
	out.Config = c.connectorConfig(spec, role, fields["config"], Join(path, "config"))
	return out, &spec
}

func (c *checker) parentPos(path string) Pos {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return posAt(c.root, "")
	}
	return posAt(c.root, path[:i])
}

// FieldsFor returns the fields of spec that a block of role accepts, in declaration order.
func FieldsFor(spec Spec, role Role) []FieldSpec {
	out := make([]FieldSpec, 0, len(spec.Fields))
	for _, f := range spec.Fields {
		if f.Role == 0 || f.Role&role != 0 {
			out = append(out, f)
		}
	}
	return out
}

// connectorConfig validates a connector's config map against its Spec: unknown keys,
// types, enums, minimums, required keys and defaults, then the Spec's own cross-field rules.
func (c *checker) connectorConfig(spec Spec, role Role, n *Node, path string) map[string]any {
	specs := FieldsFor(spec, role)
	names := make([]string, len(specs))
	for i, f := range specs {
		names[i] = f.Name
	}
	cfg := map[string]any{}
	if n != nil && n.Kind != KindNull && n.Kind != KindMap {
		c.add(path, n.Pos, "must be a map, not %s", describe(n))
		return cfg
	}
	present := map[string]bool{}
	later := map[string]any{} // deferred values: kept, but hidden from cross-field rules
	reported := map[string]bool{}
	if n != nil {
		for _, f := range n.Fields {
			fp := Join(path, f.Key)
			fs, ok := findField(specs, f.Key)
			if !ok {
				if len(names) == 0 {
					c.add(fp, f.KeyPos, "unknown key: a %s %s takes no config keys", spec.Type, role)
				} else {
					c.add(fp, f.KeyPos, "unknown key for a %s %s (known keys: %s)", spec.Type, role, strings.Join(names, ", "))
				}
				continue
			}
			v, st := c.value(f.Value, fp, fs.Type)
			if st != absent {
				present[f.Key] = true
			}
			switch st {
			case deferred:
				later[f.Key] = v
			case valid:
				if c.fieldRules(fs, v, fp, f.Value.Pos) {
					cfg[f.Key] = v
				} else {
					reported[fp] = true
				}
			case invalid:
				reported[fp] = true
			}
		}
	}
	for _, fs := range specs {
		if present[fs.Name] {
			continue
		}
		switch {
		case fs.Default != nil:
			cfg[fs.Name] = normalize(fs.Default)
		case fs.Required:
			pos := Pos{}
			if n != nil {
				pos = n.Pos
			} else {
				pos = c.parentPos(path)
			}
			c.add(Join(path, fs.Name), pos, "required")
		}
	}
	if spec.Check != nil {
		// A key already refused is absent from cfg; a rule would call it missing too.
		for _, e := range spec.Check(role, cfg, path) {
			if !reported[e.Path] {
				c.addAll(Errors{e})
			}
		}
	}
	for k, v := range later {
		cfg[k] = v
	}
	return cfg
}

// fieldRules checks enum and minimum; false means the value was refused (and reported).
func (c *checker) fieldRules(fs FieldSpec, v any, path string, pos Pos) bool {
	ok := true
	if len(fs.Enum) > 0 {
		check := func(p string, s string) {
			if !contains(fs.Enum, s) {
				if fs.Secret {
					c.add(p, pos, "must be one of %s", strings.Join(fs.Enum, ", "))
				} else {
					c.add(p, pos, "must be one of %s, not %q", strings.Join(fs.Enum, ", "), s)
				}
				ok = false
			}
		}
		switch x := v.(type) {
		case string:
			check(path, x)
		case []string:
			for i, s := range x {
				check(fmt.Sprintf("%s[%d]", path, i), s)
			}
		}
	}
	if fs.Min != nil {
		if x, isInt := v.(int64); isInt && x < *fs.Min {
			c.add(path, pos, "must be at least %d", *fs.Min)
			ok = false
		}
	}
	return ok
}

func findField(specs []FieldSpec, name string) (FieldSpec, bool) {
	for _, f := range specs {
		if f.Name == name {
			return f, true
		}
	}
	return FieldSpec{}, false
}

// normalize turns Go literals used as defaults into the types validation produces, so a
// connector reads int64 whether a value was written or defaulted.
func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case []string:
		return append([]string(nil), x...)
	}
	return v
}
