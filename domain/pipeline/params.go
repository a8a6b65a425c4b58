package pipeline

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain/naming"
)

var paramKeys = []string{"type", "required", "default", "secret", "description", "enum", "pattern", "min", "max", "max_length"}

var paramTypes = []string{string(ParamString), string(ParamInt), string(ParamFloat), string(ParamBool), string(ParamDate), string(ParamDatetime)}

func validParamName(s string) bool { return naming.Valid(s) }

// ParseParams reads a params block (SPEC §8.1, §14.2): a map of param name to {type,
// required, default, secret, description, enum, pattern, min, max, max_length}. type
// defaults to string. The block is a declaration, not
// data: its values are taken exactly as typed, so a default must already have the param's
// type. A nil or null node declares no params.
func ParseParams(node *Node) ([]Param, Errors) {
	c := &checker{root: node}
	if node == nil || node.Kind == KindNull {
		return nil, nil
	}
	if node.Kind != KindMap {
		c.add("params", node.Pos, "must be a map of param name to {type, required, default, secret, description}, not %s", describe(node))
		return nil, c.errs
	}
	var out []Param
	for _, f := range node.Fields {
		path := Join("params", f.Key)
		if !validParamName(f.Key) {
			c.add(path, f.KeyPos, "%s", naming.Check("param name", f.Key).Error())
			continue
		}
		if p, ok := c.param(f.Key, f.Value, path); ok {
			out = append(out, p)
		}
	}
	return out, c.errs
}

func (c *checker) param(name string, n *Node, path string) (Param, bool) {
	p := Param{Name: name, Type: ParamString}
	before := len(c.errs)
	fields, ok := c.mapFields(n, path, paramKeys)
	if !ok {
		return p, false
	}
	v, typeStatus := c.enum(fields["type"], Join(path, "type"), paramTypes...)
	if typeStatus == valid {
		p.Type = ParamType(v)
	}
	if v, st := c.value(fields["required"], Join(path, "required"), FieldBool); st == valid {
		p.Required = v.(bool)
	}
	if v, st := c.value(fields["secret"], Join(path, "secret"), FieldBool); st == valid {
		p.Secret = v.(bool)
	}
	if v, st := c.value(fields["description"], Join(path, "description"), FieldString); st == valid {
		p.Description = v.(string)
	}
	if d := fields["default"]; d != nil && d.Kind != KindNull {
		dp := Join(path, "default")
		// With a broken type there is nothing to compare the default with.
		if v, ok := declaredValue(d, p.Type); ok {
			p.Default = v
		} else if typeStatus == valid || typeStatus == absent {
			c.add(dp, d.Pos, "must be %s, like the param's type", paramTypeNoun(p.Type))
		}
		if p.Required {
			c.add(dp, d.Pos, "a required param takes no default (drop one of them)")
		}
	}
	c.constraints(&p, fields, path, typeStatus == valid || typeStatus == absent)
	return p, len(c.errs) == before
}

// declaredValue reads a value written in a declaration (a default, an enum item, a
// bound): its YAML type must match (an int is accepted for a float; dates are strings).
func declaredValue(n *Node, t ParamType) (any, bool) {
	if n.Kind != KindScalar {
		return nil, false
	}
	switch t {
	case ParamString:
		return n.Value, n.Type == TypeString
	case ParamDate, ParamDatetime:
		if n.Type != TypeString {
			return nil, false
		}
	case ParamInt:
		if n.Type != TypeInt {
			return nil, false
		}
	case ParamFloat:
		if n.Type != TypeInt && n.Type != TypeFloat {
			return nil, false
		}
	case ParamBool:
		if n.Type != TypeBool {
			return nil, false
		}
	}
	return parseParamValue(n.Value, t)
}

// parseParamValue reads text as a value of type t: int64, float64, bool, Date, time.Time
// or string.
func parseParamValue(s string, t ParamType) (any, bool) {
	switch t {
	case ParamDate:
		d, err := ParseDate(strings.TrimSpace(s))
		return d, err == nil
	case ParamDatetime:
		return parseDatetime(strings.TrimSpace(s))
	case ParamInt:
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		return v, err == nil
	case ParamFloat:
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return v, err == nil && !math.IsInf(v, 0) && !math.IsNaN(v)
	case ParamBool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
		return nil, false
	}
	return s, true
}

func paramTypeNoun(t ParamType) string {
	switch t {
	case ParamInt:
		return "an int"
	case ParamFloat:
		return "a float"
	case ParamBool:
		return "true or false"
	case ParamDate:
		return "a date (YYYY-MM-DD)"
	case ParamDatetime:
		return "a date and time in RFC 3339 (e.g. 2026-01-02T15:04:05Z)"
	}
	return "a string"
}

// BindParams gives each declared param its value: the supplied text parsed to the param's
// type, else its default. Supplied params that are not declared, required params that are
// missing, values that do not parse and values that break a constraint (enum, pattern,
// min, max, max_length) are errors naming the param (FieldError.Param is set, so the
// answer is invalid_params). Optional params with no value and no default are absent from
// the result.
func BindParams(decl []Param, supplied map[string]string) (map[string]any, Errors) {
	var errs Errors
	declared := make(map[string]Param, len(decl))
	names := make([]string, 0, len(decl))
	for _, p := range decl {
		declared[p.Name] = p
		names = append(names, p.Name)
	}
	extra := make([]string, 0)
	for name := range supplied {
		if _, ok := declared[name]; !ok {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		msg := "unknown param: the config declares no params"
		if len(names) > 0 {
			msg = "unknown param (declared: " + strings.Join(names, ", ") + ")"
		}
		errs = append(errs, FieldError{Path: Join("params", name), Message: msg, Param: name})
	}
	out := make(map[string]any, len(decl))
	for _, p := range decl {
		path := Join("params", p.Name)
		raw, ok := supplied[p.Name]
		switch {
		case ok:
			v, good := parseParamValue(raw, p.Type)
			if !good {
				msg := "must be " + paramTypeNoun(p.Type)
				if !p.Secret {
					msg += fmt.Sprintf(", not %q", raw)
				}
				errs = append(errs, FieldError{Path: path, Message: msg, Param: p.Name})
				continue
			}
			if key, msg := p.Violation(v); key != "" {
				errs = append(errs, FieldError{Path: path, Message: msg, Param: p.Name})
				continue
			}
			out[p.Name] = v
		case p.Default != nil:
			out[p.Name] = p.Default
		case p.Required:
			errs = append(errs, FieldError{Path: path, Message: "required", Param: p.Name})
		}
	}
	return out, errs
}

// ParamText is the text form of a bound param value, used when a ${param.X} is part of a
// longer string.
func ParamText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case Date:
		return x.String()
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// ParamScalarType is the ScalarType a whole-scalar ${param.X} of type t takes.
func ParamScalarType(t ParamType) ScalarType {
	switch t {
	case ParamInt:
		return TypeInt
	case ParamFloat:
		return TypeFloat
	case ParamBool:
		return TypeBool
	}
	return TypeString
}
