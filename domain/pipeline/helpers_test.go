package pipeline_test

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// m builds a map node from alternating keys and values, keeping the order.
func m(kv ...any) *pipeline.Node {
	n := &pipeline.Node{Kind: pipeline.KindMap, Fields: []pipeline.Field{}}
	for i := 0; i < len(kv); i += 2 {
		n.Fields = append(n.Fields, pipeline.Field{Key: kv[i].(string), Value: val(kv[i+1])})
	}
	return n
}

// l builds a list node.
func l(items ...any) *pipeline.Node {
	n := &pipeline.Node{Kind: pipeline.KindList, Items: []*pipeline.Node{}}
	for _, it := range items {
		n.Items = append(n.Items, val(it))
	}
	return n
}

func val(v any) *pipeline.Node {
	switch x := v.(type) {
	case *pipeline.Node:
		return x
	case nil:
		return &pipeline.Node{Kind: pipeline.KindNull}
	case string:
		return &pipeline.Node{Kind: pipeline.KindScalar, Type: pipeline.TypeString, Value: x}
	case int:
		return &pipeline.Node{Kind: pipeline.KindScalar, Type: pipeline.TypeInt, Value: strconv.Itoa(x)}
	case float64:
		return &pipeline.Node{Kind: pipeline.KindScalar, Type: pipeline.TypeFloat, Value: strconv.FormatFloat(x, 'g', -1, 64)}
	case bool:
		return &pipeline.Node{Kind: pipeline.KindScalar, Type: pipeline.TypeBool, Value: strconv.FormatBool(x)}
	}
	panic(fmt.Sprintf("unsupported %T", v))
}

// deferred is a leaf left unresolved by the resolver.
func deferred(raw string) *pipeline.Node {
	return &pipeline.Node{Kind: pipeline.KindScalar, Type: pipeline.TypeString, Value: raw, Deferred: true}
}

// catalog is a small connector registry for tests.
type catalog map[string]pipeline.Spec

func (c catalog) Spec(typ string) (pipeline.Spec, bool) {
	s, ok := c[typ]
	return s, ok
}

func (c catalog) Types(role pipeline.Role) []string {
	var out []string
	for name, s := range c {
		if s.Roles&role != 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func testCatalog() catalog {
	one := int64(1)
	db := pipeline.Spec{
		Type: "db", Roles: pipeline.RoleBoth, Description: "a SQL database", ExactlyOnce: true,
		Fields: append(append([]pipeline.FieldSpec{
			{Name: "connection_url", Type: pipeline.FieldString, Required: true, Secret: true, Description: "where"},
			{Name: "table_name", Type: pipeline.FieldString, Role: pipeline.RoleSink, Required: true},
		}, pipeline.SourceQueryFields()...), pipeline.SinkWriteFields()...),
		Check: func(role pipeline.Role, cfg map[string]any, path string) pipeline.Errors {
			if role == pipeline.RoleSink {
				return pipeline.CheckWriteMode(cfg, path)
			}
			return nil
		},
	}
	gen := pipeline.Spec{
		Type: "gen", Roles: pipeline.RoleSource,
		Fields: []pipeline.FieldSpec{
			{Name: "count", Type: pipeline.FieldInt, Required: true, Min: &one},
			{Name: "rate", Type: pipeline.FieldNumber},
			{Name: "verbose", Type: pipeline.FieldBool, Default: false},
			{Name: "columns", Type: pipeline.FieldList},
			{Name: "extra", Type: pipeline.FieldObject},
		},
	}
	out := pipeline.Spec{
		Type: "out", Roles: pipeline.RoleSink,
		Fields: []pipeline.FieldSpec{
			{Name: "format", Type: pipeline.FieldString, Default: "jsonl", Enum: []string{"jsonl", "csv"}},
		},
	}
	return catalog{"db": db, "gen": gen, "out": out}
}
