package configtext

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// MaxNodes bounds the size of a decoded document after aliases are expanded, so a small
// text with nested aliases cannot expand into gigabytes; MaxDepth bounds its nesting the
// same way (pipeline.CheckShape refuses deeper text before parsing, this catches depth
// that aliases add).
const (
	MaxNodes = pipeline.MaxNodes
	MaxDepth = pipeline.MaxDepth
)

// Decoder decodes config text; the zero value is ready to use.
type Decoder struct{}

// Decode implements the loader's decoding port.
func (Decoder) Decode(text []byte) (*pipeline.Node, error) { return Decode(text) }

// Decode parses YAML or JSON text into a document tree. Malformed text is a
// *pipeline.SyntaxError with the line (and the column when known); a document the config
// model cannot hold (duplicate keys, merge keys, custom tags, non-map root, several
// documents) is pipeline.Errors with every problem and its position.
func Decode(text []byte) (node *pipeline.Node, err error) {
	defer func() {
		// yaml.v3 has panicked on some malformed inputs; a bad config must never take
		// the process down.
		if r := recover(); r != nil {
			node, err = nil, &pipeline.SyntaxError{Message: fmt.Sprintf("cannot parse the config: %v", r)}
		}
	}()
	// The shape limits first: yaml.v3 and the conversion below allocate per level.
	if err := pipeline.CheckShape(text); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, pipeline.Errors{{Message: "config is empty"}}
		}
		return nil, syntaxError(text, err)
	}
	var second yaml.Node
	switch err := dec.Decode(&second); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(text, err)
	default:
		return nil, pipeline.Errors{{Pos: pipeline.Pos{Line: second.Line, Column: second.Column},
			Message: "the text holds more than one YAML document (---); a config is one document"}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, pipeline.Errors{{Message: "config is empty"}}
	}
	rootY := doc.Content[0]
	if rootY.Kind == yaml.ScalarNode && rootY.ShortTag() == "!!null" {
		return nil, pipeline.Errors{{Message: "config is empty"}}
	}
	c := &converter{active: map[*yaml.Node]bool{}}
	root := c.convert(rootY, "")
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	if root.Kind != pipeline.KindMap {
		return nil, pipeline.Errors{{Pos: root.Pos, Message: "a config must be a map with version, name and pipeline"}}
	}
	return root, nil
}

type converter struct {
	errs   pipeline.Errors
	nodes  int
	depth  int
	active map[*yaml.Node]bool // anchors being expanded, to refuse an alias inside itself
}

func (c *converter) fail(path string, y *yaml.Node, format string, a ...any) {
	c.errs = append(c.errs, pipeline.FieldError{Path: path, Pos: posOf(y), Message: fmt.Sprintf(format, a...)})
}

func posOf(y *yaml.Node) pipeline.Pos { return pipeline.Pos{Line: y.Line, Column: y.Column} }

func (c *converter) convert(y *yaml.Node, path string) *pipeline.Node {
	c.nodes++
	if c.nodes > MaxNodes {
		if c.nodes == MaxNodes+1 {
			c.fail(path, y, "the document has more than %d nodes once aliases are expanded", MaxNodes)
		}
		return &pipeline.Node{Kind: pipeline.KindNull}
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > MaxDepth {
		if c.depth == MaxDepth+1 {
			c.fail(path, y, "the document nests deeper than %d levels once aliases are expanded", MaxDepth)
		}
		return &pipeline.Node{Kind: pipeline.KindNull}
	}
	if y.Anchor != "" {
		c.active[y] = true
		defer delete(c.active, y)
	}
	switch y.Kind {
	case yaml.AliasNode:
		if c.active[y.Alias] {
			c.fail(path, y, "alias *%s refers to the value that contains it", y.Value)
			return &pipeline.Node{Kind: pipeline.KindNull, Pos: posOf(y)}
		}
		c.active[y.Alias] = true
		n := c.convert(y.Alias, path)
		delete(c.active, y.Alias)
		return n
	case yaml.ScalarNode:
		return c.scalar(y, path)
	case yaml.SequenceNode:
		n := &pipeline.Node{Kind: pipeline.KindList, Pos: posOf(y), Items: make([]*pipeline.Node, 0, len(y.Content))}
		for i, it := range y.Content {
			n.Items = append(n.Items, c.convert(it, path+"["+strconv.Itoa(i)+"]"))
		}
		return n
	case yaml.MappingNode:
		return c.mapping(y, path)
	}
	c.fail(path, y, "unsupported YAML node")
	return &pipeline.Node{Kind: pipeline.KindNull, Pos: posOf(y)}
}

func (c *converter) mapping(y *yaml.Node, path string) *pipeline.Node {
	n := &pipeline.Node{Kind: pipeline.KindMap, Pos: posOf(y), Fields: make([]pipeline.Field, 0, len(y.Content)/2)}
	seen := map[string]pipeline.Pos{}
	for i := 0; i+1 < len(y.Content); i += 2 {
		k, v := y.Content[i], y.Content[i+1]
		if k.Kind == yaml.AliasNode && k.Alias != nil {
			k = k.Alias
		}
		if k.ShortTag() == "!!merge" {
			c.fail(pipeline.Join(path, k.Value), k, "merge keys (<<) are not supported: write the keys out")
			continue
		}
		if k.Kind != yaml.ScalarNode {
			c.fail(path, k, "a key must be a plain value, not a map or list")
			continue
		}
		key := k.Value
		kp := pipeline.Join(path, key)
		if first, dup := seen[key]; dup {
			c.errs = append(c.errs, pipeline.FieldError{Path: kp, Pos: posOf(k),
				Message: fmt.Sprintf("duplicate key (first defined at line %d)", first.Line)})
			continue
		}
		seen[key] = posOf(k)
		n.Fields = append(n.Fields, pipeline.Field{Key: key, KeyPos: posOf(k), Value: c.convert(v, kp)})
	}
	return n
}

func (c *converter) scalar(y *yaml.Node, path string) *pipeline.Node {
	n := &pipeline.Node{Kind: pipeline.KindScalar, Pos: posOf(y), Value: y.Value}
	switch tag := y.ShortTag(); tag {
	case "!!str", "!!timestamp":
		// Dates stay text: the model has no time type and connectors parse what they need.
		n.Type = pipeline.TypeString
	case "!!null":
		return &pipeline.Node{Kind: pipeline.KindNull, Pos: posOf(y)}
	case "!!int":
		var v int64
		if err := y.Decode(&v); err != nil {
			c.fail(path, y, "integer out of range (at most 64 bits)")
			break
		}
		// Canonical decimal text, so 0x1F and 31 are the same value everywhere after.
		n.Type, n.Value = pipeline.TypeInt, strconv.FormatInt(v, 10)
	case "!!float":
		var v float64
		if err := y.Decode(&v); err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			c.fail(path, y, "must be a finite number")
			break
		}
		n.Type, n.Value = pipeline.TypeFloat, strconv.FormatFloat(v, 'g', -1, 64)
	case "!!bool":
		var v bool
		if err := y.Decode(&v); err != nil {
			c.fail(path, y, "must be true or false")
			break
		}
		n.Type, n.Value = pipeline.TypeBool, strconv.FormatBool(v)
	default:
		c.fail(path, y, "unsupported tag %s (only plain values, !!str, !!int, !!float, !!bool and !!null)", tag)
	}
	return n
}
