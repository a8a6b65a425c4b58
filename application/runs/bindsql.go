package runs

import (
	"strings"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// The source's SQL query takes its params, now and backfill values as bind parameters
// (SPEC §14.2), so materialize must not paste them into its text. The query keeps its
// directives and the stored config keeps a params block whose defaults are the bound
// values: the claimer binds them exactly as the submitting load did. A backfill window
// has no param of its own, so its bounds become two datetime params the query refers to.

// windowParam names the param that carries a backfill bound in a stored config: one no
// declared param uses.
func (b *binding) windowParam(bound string) string {
	name := "sluice.backfill." + bound
	for b.declared(name) {
		name += "_"
	}
	return name
}

func (b *binding) declared(name string) bool {
	for _, p := range b.decl {
		if p.Name == name {
			return true
		}
	}
	return false
}

// bindSQL rewrites the query's text for the claimer: literal parts as written, param
// directives kept, backfill directives turned into the params that carry the window.
func (b *binding) bindSQL(tpl pipeline.Template) string {
	var out strings.Builder
	for _, p := range tpl.Parts {
		switch {
		case p.Directive == nil:
			out.WriteString(escapeDollar(p.Literal))
		case p.Directive.Kind == pipeline.DirectiveParam:
			b.sqlParams = b.sqlParams || b.params
			out.WriteString(p.Directive.Raw)
		case p.Directive.Kind == pipeline.DirectiveBackfill && b.window != nil:
			if b.sqlWindow == nil {
				b.sqlWindow = map[string]string{}
			}
			name := b.windowParam(p.Directive.Arg)
			b.sqlWindow[p.Directive.Arg] = name
			out.WriteString("${param." + name + "}")
		default:
			out.WriteString(p.Directive.Raw)
		}
	}
	return out.String()
}

// paramsBlock leaves the tree's params block as the claimer needs it: dropped when every
// value was written into the text; kept with the bound values as defaults when the SQL
// query still refers to them; extended with the window's params.
func (b *binding) paramsBlock(tree *pipeline.Node) {
	if !b.sqlParams && b.sqlWindow == nil {
		if b.params {
			dropField(tree, "params")
		}
		return
	}
	block := tree.Get("params")
	if block == nil || block.Kind != pipeline.KindMap {
		dropField(tree, "params")
		block = &pipeline.Node{Kind: pipeline.KindMap}
		tree.Fields = append(tree.Fields, pipeline.Field{Key: "params", Value: block})
	}
	if b.sqlParams {
		for _, p := range b.decl {
			if v, ok := b.values[p.Name]; ok {
				setDefault(declOf(block, p.Name), escapeDollar(pipeline.ParamText(v)), pipeline.ParamScalarType(p.Type))
			}
		}
	}
	for _, bound := range []string{pipeline.BackfillStart, pipeline.BackfillEnd} {
		if name, ok := b.sqlWindow[bound]; ok {
			decl := &pipeline.Node{Kind: pipeline.KindMap, Fields: []pipeline.Field{
				{Key: "type", Value: &pipeline.Node{Kind: pipeline.KindScalar, Value: string(pipeline.ParamDatetime)}},
			}}
			setDefault(decl, b.windowText(bound), pipeline.TypeString)
			block.Fields = append(block.Fields, pipeline.Field{Key: name, Value: decl})
		}
	}
}

// declOf is the declaration of param name in block, made a map when it was written as
// null (a string param with no settings).
func declOf(block *pipeline.Node, name string) *pipeline.Node {
	for i := range block.Fields {
		if f := &block.Fields[i]; f.Key == name {
			if f.Value == nil || f.Value.Kind == pipeline.KindNull {
				f.Value = &pipeline.Node{Kind: pipeline.KindMap}
			}
			return f.Value
		}
	}
	return nil
}

// setDefault makes text the default of a param declaration; a required param is one no
// longer (a required param takes no default).
func setDefault(decl *pipeline.Node, text string, typ pipeline.ScalarType) {
	if decl == nil || decl.Kind != pipeline.KindMap {
		return
	}
	dropField(decl, "required")
	dropField(decl, "default")
	decl.Fields = append(decl.Fields, pipeline.Field{Key: "default",
		Value: &pipeline.Node{Kind: pipeline.KindScalar, Type: typ, Value: text}})
}

func dropField(n *pipeline.Node, key string) {
	kept := n.Fields[:0]
	for _, f := range n.Fields {
		if f.Key != key {
			kept = append(kept, f)
		}
	}
	n.Fields = kept
}
