package execute

import (
	"strings"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// SQLQueryPath finds the source key of root that holds SQL text (FieldSpec.SQL): its
// path and dialect, or "" when the source type is unknown, written with a directive, or
// takes no SQL.
func SQLQueryPath(root *pipeline.Node, cat pipeline.Catalog) (string, pipeline.Dialect) {
	typ := root.Get("pipeline").Get("source").Get("type")
	if typ == nil || typ.Kind != pipeline.KindScalar || strings.Contains(typ.Value, "${") || cat == nil {
		return "", ""
	}
	spec, ok := cat.Spec(typ.Value)
	if !ok {
		return "", ""
	}
	for _, f := range pipeline.FieldsFor(spec, pipeline.RoleSource) {
		if f.SQL != "" {
			return "pipeline.source.config." + f.Name, f.SQL
		}
	}
	return "", ""
}

// CheckSQLPlacement reports every bind directive of root's SQL query that does not stand
// where a value may (SPEC §14.2), each as an error at the query naming its position and
// showing the unquoted form. Template registration calls it on the raw config; the
// resolver applies the same rule to every load.
func CheckSQLPlacement(root *pipeline.Node, cat pipeline.Catalog) pipeline.Errors {
	path, dialect := SQLQueryPath(root, cat)
	if path == "" {
		return nil
	}
	n := root.Get("pipeline").Get("source").Get("config").Get(path[strings.LastIndexByte(path, '.')+1:])
	if n == nil || n.Kind != pipeline.KindScalar || !strings.Contains(n.Value, "${") {
		return nil
	}
	if _, err := pipeline.ParseTemplate(n.Value); err != nil {
		return nil // reported where the directive is resolved
	}
	var errs pipeline.Errors
	for _, m := range pipeline.MisplacedDirectives(n.Value, dialect) {
		errs = append(errs, pipeline.FieldError{Path: path, Pos: n.Pos, Message: m.Message()})
	}
	return errs
}

// placed applies CheckSQLPlacement's rule to the query leaf n; false means an error was
// recorded.
func (r *resolution) placed(path string, n *pipeline.Node) bool {
	ms := pipeline.MisplacedDirectives(n.Value, r.sqlDialect)
	for _, m := range ms {
		r.fail(path, n, "%s", m.Message())
	}
	return len(ms) == 0
}

// statement resolves the SQL query leaf: params, now and backfill become the arguments of
// a pipeline.Statement, never text; env, secret and file directives (the operator's own
// text) are written into the text.
func (r *resolution) statement(path string, n *pipeline.Node, tpl pipeline.Template) {
	stmt := pipeline.Statement{Text: []string{""}}
	ok := true
	for _, p := range tpl.Parts {
		last := len(stmt.Text) - 1
		switch {
		case p.Directive == nil:
			stmt.Text[last] += p.Literal
		case pipeline.Binds(p.Directive.Kind):
			v, good := r.bound(path, n, *p.Directive)
			ok = ok && good
			stmt.Args = append(stmt.Args, v)
			stmt.Text = append(stmt.Text, "")
		default:
			s, good := r.value(path, n, *p.Directive)
			ok = ok && good
			stmt.Text[last] += s
		}
	}
	if !ok {
		n.Deferred = true
		return
	}
	n.Value = stmt.Render(func(int) string { return "?" })
	n.Statement = &stmt
}
