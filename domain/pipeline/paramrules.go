package pipeline

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultMaxLength bounds a string param that declares no max_length (SPEC §14.2): a
// value is data, and data this long is a mistake or an attack, never a filter value.
const DefaultMaxLength = 1024

// Date is the value of a date param: a calendar day with no time and no zone, so a
// driver binds it as a date rather than as an instant.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate reads YYYY-MM-DD, refusing days that do not exist.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
	}
	return Date{Year: t.Year(), Month: t.Month(), Day: t.Day()}, nil
}

// DateOf is the calendar day of t in t's own zone.
func DateOf(t time.Time) Date { return Date{Year: t.Year(), Month: t.Month(), Day: t.Day()} }

func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

// Compare orders dates: -1, 0 or +1.
func (d Date) Compare(o Date) int {
	return cmp.Or(cmp.Compare(d.Year, o.Year), cmp.Compare(d.Month, o.Month), cmp.Compare(d.Day, o.Day))
}

// parseDatetime reads RFC 3339 (fractional seconds allowed), keeping the written offset.
func parseDatetime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

// JSONValue is a param value as a JSON answer carries it: strings, numbers and bools as
// they are, dates and times as their text (YYYY-MM-DD, RFC 3339).
func JSONValue(v any) any {
	switch v.(type) {
	case nil, string, int64, float64, bool:
		return v
	}
	return ParamText(v)
}

// compareValues orders two values of one param type; ok is false for types without an
// order (strings, bools).
func compareValues(a, b any) (int, bool) {
	switch x := a.(type) {
	case int64:
		y, ok := b.(int64)
		return cmp.Compare(x, y), ok
	case float64:
		y, ok := b.(float64)
		return cmp.Compare(x, y), ok
	case Date:
		y, ok := b.(Date)
		return x.Compare(y), ok
	case time.Time:
		y, ok := b.(time.Time)
		return x.Compare(y), ok
	}
	return 0, false
}

// ordered reports whether min and max apply to params of type t.
func ordered(t ParamType) bool {
	return t == ParamInt || t == ParamFloat || t == ParamDate || t == ParamDatetime
}

// wholeMatch compiles a pattern so it must match the whole value, not a part of it: a
// pattern meant as ^[a-z]+$ must not let "eu' OR 1=1" through because it starts with eu.
func wholeMatch(pattern string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + pattern + `)$`)
}

// Violation is the first constraint of p that v breaks: the constraint's key and a
// message for the user; "" when v satisfies all of them. The message quotes the value
// only for enum and never for a secret param.
func (p Param) Violation(v any) (constraint, message string) {
	if len(p.Enum) > 0 {
		found := false
		for _, e := range p.Enum {
			if e == v {
				found = true
				break
			}
		}
		if !found {
			msg := "must be one of " + enumText(p.Enum)
			if !p.Secret {
				msg += fmt.Sprintf(", not %q", ParamText(v))
			}
			return "enum", msg
		}
	}
	if s, ok := v.(string); ok {
		limit := p.MaxLength
		if limit == 0 {
			limit = DefaultMaxLength
		}
		if n := utf8.RuneCountInString(s); n > limit {
			return "max_length", fmt.Sprintf("is %d characters long; max_length allows %d", n, limit)
		}
		if p.Pattern != "" {
			re, err := wholeMatch(p.Pattern)
			if err != nil || !re.MatchString(s) {
				return "pattern", fmt.Sprintf("must match the whole of pattern %q", p.Pattern)
			}
		}
	}
	if p.Min != nil {
		if c, ok := compareValues(v, p.Min); ok && c < 0 {
			return "min", "must be at least " + ParamText(p.Min) + " (min)"
		}
	}
	if p.Max != nil {
		if c, ok := compareValues(v, p.Max); ok && c > 0 {
			return "max", "must be at most " + ParamText(p.Max) + " (max)"
		}
	}
	return "", ""
}

func enumText(values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = ParamText(v)
	}
	return strings.Join(parts, ", ") + " (enum)"
}

// constraints reads enum, pattern, min, max and max_length of a param declaration into p,
// reporting each misuse at its key. The default (already in p) must satisfy them.
func (c *checker) constraints(p *Param, fields map[string]*Node, path string, typeKnown bool) {
	if !typeKnown {
		return // with a broken type there is nothing to read the values with
	}
	if n := fields["enum"]; n != nil && n.Kind != KindNull {
		c.enumValues(p, n, Join(path, "enum"))
	}
	if n := fields["pattern"]; n != nil && n.Kind != KindNull {
		pp := Join(path, "pattern")
		if v, st := c.value(n, pp, FieldString); st == valid {
			if p.Type != ParamString {
				c.add(pp, n.Pos, "applies to string params only (this one is %s)", p.Type)
			} else if _, err := wholeMatch(v.(string)); err != nil {
				c.add(pp, n.Pos, "is not an RE2 regular expression: %v", err)
			} else {
				p.Pattern = v.(string)
			}
		}
	}
	if n := fields["max_length"]; n != nil && n.Kind != KindNull {
		mp := Join(path, "max_length")
		if v, st := c.value(n, mp, FieldInt); st == valid {
			switch {
			case p.Type != ParamString:
				c.add(mp, n.Pos, "applies to string params only (this one is %s)", p.Type)
			case v.(int64) < 1 || v.(int64) > 1<<20:
				c.add(mp, n.Pos, "must be between 1 and %d", 1<<20)
			default:
				p.MaxLength = int(v.(int64))
			}
		}
	}
	p.Min = c.bound(p, fields["min"], Join(path, "min"))
	p.Max = c.bound(p, fields["max"], Join(path, "max"))
	if p.Min != nil && p.Max != nil {
		if o, _ := compareValues(p.Min, p.Max); o > 0 {
			c.add(Join(path, "max"), fields["max"].Pos, "must not be below min (%s)", ParamText(p.Min))
		}
	}
	if p.Default != nil {
		if key, msg := p.Violation(p.Default); key != "" {
			c.add(Join(path, "default"), fields["default"].Pos, "%s", msg)
		}
	}
}

func (c *checker) enumValues(p *Param, n *Node, path string) {
	if n.Kind != KindList || len(n.Items) == 0 {
		c.add(path, n.Pos, "must be a non-empty list of the values the param may take")
		return
	}
	out := make([]any, 0, len(n.Items))
	for i, it := range n.Items {
		v, ok := declaredValue(it, p.Type)
		if !ok {
			c.add(path+"["+strconv.Itoa(i)+"]", it.Pos, "must be %s, like the param's type", paramTypeNoun(p.Type))
			continue
		}
		out = append(out, v)
	}
	if len(out) == len(n.Items) {
		p.Enum = out
	}
}

// bound reads a min or max: only ordered types have one.
func (c *checker) bound(p *Param, n *Node, path string) any {
	if n == nil || n.Kind == KindNull {
		return nil
	}
	if !ordered(p.Type) {
		c.add(path, n.Pos, "applies to int, float, date and datetime params only (this one is %s)", p.Type)
		return nil
	}
	v, ok := declaredValue(n, p.Type)
	if !ok {
		c.add(path, n.Pos, "must be %s, like the param's type", paramTypeNoun(p.Type))
		return nil
	}
	return v
}
