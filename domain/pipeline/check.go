package pipeline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// checker collects every error of one Build; nothing in validation stops at the first.
type checker struct {
	root *Node
	errs Errors
}

func (c *checker) add(path string, pos Pos, format string, a ...any) {
	c.errs = append(c.errs, FieldError{Path: path, Pos: pos, Message: fmt.Sprintf(format, a...)})
}

// addAll appends errors produced elsewhere (a Spec's Check), filling in positions from the
// document when the producer only knew the path.
func (c *checker) addAll(es Errors) {
	for _, e := range es {
		if e.Pos.Line == 0 {
			e.Pos = posAt(c.root, e.Path)
		}
		c.errs = append(c.errs, e)
	}
}

// status says what a lookup found.
type status uint8

const (
	absent   status = iota // missing or null
	deferred               // a directive left unresolved; any value is accepted
	invalid                // reported already
	valid
)

// mapFields checks that n is a map holding only allowed keys and returns its values by
// key. Unknown keys are reported with the known ones so the fix is obvious.
func (c *checker) mapFields(n *Node, path string, allowed []string) (map[string]*Node, bool) {
	if n == nil || n.Kind == KindNull {
		return map[string]*Node{}, true
	}
	if n.Kind != KindMap {
		c.add(path, n.Pos, "must be a map, not %s", describe(n))
		return nil, false
	}
	out := make(map[string]*Node, len(n.Fields))
	for _, f := range n.Fields {
		if !contains(allowed, f.Key) {
			c.add(Join(path, f.Key), f.KeyPos, "unknown key (known keys: %s)", strings.Join(allowed, ", "))
			continue
		}
		out[f.Key] = f.Value
	}
	return out, true
}

// value converts a node to a value of type t. Strings that parse as the wanted int,
// number or bool are accepted because env and file directives always produce text.
func (c *checker) value(n *Node, path string, t FieldType) (any, status) {
	if n == nil || n.Kind == KindNull {
		return nil, absent
	}
	if n.Deferred {
		return n.Value, deferred
	}
	v, problem := coerce(n, path, t, c)
	if problem != "" {
		c.add(path, n.Pos, "%s", problem)
		return nil, invalid
	}
	if v == nil {
		return nil, invalid // items reported one by one
	}
	return v, valid
}

// coerce returns the converted value, or a problem to report at path. List items are
// reported by coerce itself (through c) with their own paths.
func coerce(n *Node, path string, t FieldType, c *checker) (any, string) {
	switch t {
	case FieldString:
		if n.Statement != nil {
			return *n.Statement, ""
		}
		if n.Kind == KindScalar && n.Type == TypeString {
			return n.Value, ""
		}
		if n.Kind == KindScalar {
			return nil, fmt.Sprintf("must be a string, not %s (quote the value)", describe(n))
		}
		return nil, "must be a string, not " + describe(n)
	case FieldInt:
		if n.Kind == KindScalar && (n.Type == TypeInt || n.Type == TypeString) {
			if v, err := strconv.ParseInt(strings.TrimSpace(n.Value), 10, 64); err == nil {
				return v, ""
			}
		}
		return nil, "must be an integer"
	case FieldNumber:
		if n.Kind == KindScalar && n.Type != TypeBool {
			if v, err := strconv.ParseFloat(strings.TrimSpace(n.Value), 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
				return v, ""
			}
		}
		return nil, "must be a number"
	case FieldBool:
		if n.Kind == KindScalar && (n.Type == TypeBool || n.Type == TypeString) {
			switch strings.ToLower(strings.TrimSpace(n.Value)) {
			case "true":
				return true, ""
			case "false":
				return false, ""
			}
		}
		return nil, "must be true or false"
	case FieldStrings:
		if n.Kind != KindList {
			return nil, "must be a list of strings, not " + describe(n)
		}
		out := make([]string, 0, len(n.Items))
		ok := true
		for i, it := range n.Items {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case it.Deferred:
				out = append(out, it.Value)
			case it.Kind == KindScalar && it.Type == TypeString:
				out = append(out, it.Value)
			default:
				c.add(p, it.Pos, "must be a string, not %s", describe(it))
				ok = false
			}
		}
		if !ok {
			return nil, ""
		}
		return out, ""
	case FieldObject:
		if n.Kind != KindMap {
			return nil, "must be a map, not " + describe(n)
		}
		return n.Any(), ""
	case FieldList:
		if n.Kind != KindList {
			return nil, "must be a list, not " + describe(n)
		}
		return n.Any(), ""
	}
	return nil, fmt.Sprintf("has an unsupported field type %q", t)
}

// describe names a node's shape for messages without echoing its value, which may be a
// secret read through a directive.
func describe(n *Node) string {
	switch n.Kind {
	case KindNull:
		return "null"
	case KindMap:
		return "a map"
	case KindList:
		return "a list"
	}
	switch n.Type {
	case TypeInt:
		return "an integer"
	case TypeFloat:
		return "a number"
	case TypeBool:
		return "a boolean"
	}
	return "a string"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// posAt finds the position of the deepest node along a dotted path (list items as
// name[i]); a path that names a missing key points at its parent map.
func posAt(root *Node, path string) Pos {
	n := root
	best := Pos{}
	if n != nil {
		best = n.Pos
	}
	for _, seg := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(seg, "[")
		if key != "" {
			next := n.Get(key)
			if next == nil {
				return best
			}
			n = next
			best = n.Pos
		}
		for rest != "" {
			idx, tail, ok := strings.Cut(rest, "]")
			if !ok {
				return best
			}
			i, err := strconv.Atoi(idx)
			if err != nil || n.Kind != KindList || i < 0 || i >= len(n.Items) {
				return best
			}
			n = n.Items[i]
			best = n.Pos
			rest = strings.TrimPrefix(tail, "[")
		}
	}
	return best
}
