package archcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// Sleep is one call of time.Sleep: the function it is in ("" at package level) and its
// line.
type Sleep struct {
	Func string
	Line int
}

// Sleeps finds the calls of time.Sleep in one Go file, whatever name the file imports
// package time under. A test that sleeps either hopes something happened meanwhile or
// proves that nothing did by waiting; both fail or pass by the machine's load, which is
// why tests wait on events or a fake clock instead (ARCHITECTURE "Wave 2 additions").
func Sleeps(filename string, src []byte) ([]Sleep, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			name := "time"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = true
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	var out []Sleep
	for _, decl := range f.Decls {
		fn := ""
		if d, ok := decl.(*ast.FuncDecl); ok {
			fn = d.Name.Name
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Sleep" {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && names[id.Name] {
				out = append(out, Sleep{Func: fn, Line: fset.Position(call.Pos()).Line})
			}
			return true
		})
	}
	return out, nil
}
