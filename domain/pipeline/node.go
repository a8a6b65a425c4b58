package pipeline

import (
	"strconv"
)

// Kind is the shape of a Node.
type Kind uint8

// The shapes a document node can take.
const (
	KindNull Kind = iota
	KindScalar
	KindMap
	KindList
)

// ScalarType is the type a scalar had in the source text (YAML or JSON). Directive
// results are strings unless the scalar was exactly one ${param.X}.
type ScalarType uint8

// Scalar types.
const (
	TypeString ScalarType = iota
	TypeInt
	TypeFloat
	TypeBool
)

// Pos is a 1-based line and column in the submitted text; zero when unknown.
type Pos struct {
	Line   int
	Column int
}

// Node is a parsed config document, independent of YAML or JSON. Decoding text into a Node
// is an adapter's job (the domain imports no YAML library); everything after that —
// unknown keys, directives, validation — works on this tree. Directives are resolved in
// scalar leaves only, so a substituted value can never change the document's structure.
type Node struct {
	Kind   Kind
	Pos    Pos
	Type   ScalarType // scalars only
	Value  string     // scalar text, unquoted
	Fields []Field    // maps, in document order
	Items  []*Node    // lists
	// Deferred marks a scalar whose directives were left unresolved on purpose (a member
	// that only checks syntax) or could not be resolved (the error is reported by the
	// resolver). Build accepts any value in a deferred leaf, so one missing env var does
	// not also produce a type error for the same key.
	Deferred bool
	// Statement is set on a SQL text leaf (FieldSpec.SQL) once its directives are
	// resolved: the text with its bind parameters apart. Build hands it to the connector
	// in place of the string.
	Statement *Statement
}

// Field is one key of a map node.
type Field struct {
	Key    string
	KeyPos Pos
	Value  *Node
}

// Get returns the value under key in a map node, or nil.
func (n *Node) Get(key string) *Node {
	if n == nil || n.Kind != KindMap {
		return nil
	}
	for i := range n.Fields {
		if n.Fields[i].Key == key {
			return n.Fields[i].Value
		}
	}
	return nil
}

// Any converts the node into plain Go values: map[string]any, []any, string, int64,
// float64, bool or nil. Map key order is lost; use Fields when it matters.
func (n *Node) Any() any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case KindScalar:
		switch n.Type {
		case TypeInt:
			if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
				return v
			}
		case TypeFloat:
			if v, err := strconv.ParseFloat(n.Value, 64); err == nil {
				return v
			}
		case TypeBool:
			if v, err := strconv.ParseBool(n.Value); err == nil {
				return v
			}
		}
		return n.Value
	case KindMap:
		m := make(map[string]any, len(n.Fields))
		for _, f := range n.Fields {
			m[f.Key] = f.Value.Any()
		}
		return m
	case KindList:
		l := make([]any, len(n.Items))
		for i, it := range n.Items {
			l[i] = it.Any()
		}
		return l
	default:
		return nil
	}
}

// Clone returns a deep copy, so resolving directives never mutates a stored tree.
func (n *Node) Clone() *Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Fields != nil {
		c.Fields = make([]Field, len(n.Fields))
		for i, f := range n.Fields {
			c.Fields[i] = Field{Key: f.Key, KeyPos: f.KeyPos, Value: f.Value.Clone()}
		}
	}
	if n.Items != nil {
		c.Items = make([]*Node, len(n.Items))
		for i, it := range n.Items {
			c.Items[i] = it.Clone()
		}
	}
	return &c
}

// Walk calls fn for every scalar leaf with its dotted path (list items as name[i]).
// fn may replace the leaf's Value and Type in place.
func (n *Node) Walk(path string, fn func(path string, leaf *Node) error) error {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case KindScalar:
		return fn(path, n)
	case KindMap:
		for _, f := range n.Fields {
			if err := f.Value.Walk(Join(path, f.Key), fn); err != nil {
				return err
			}
		}
	case KindList:
		for i, it := range n.Items {
			if err := it.Walk(path+"["+strconv.Itoa(i)+"]", fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// Join appends key to a dotted path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
