package workflows

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every workflow.GetVersion of the workflows names a marker declared in
// versions.go (one list of markers with their dates and fixtures), and
// every marker there is asked somewhere.
func TestVersionMarkersListed(t *testing.T) {
	fset := token.NewFileSet()
	listed := map[string]bool{}
	vf, err := parser.ParseFile(fset, "versions.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range vf.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					listed[n.Name] = false
				}
			}
		}
	}
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "GetVersion" || len(call.Args) < 2 {
				return true
			}
			id, ok := call.Args[1].(*ast.Ident)
			if !ok {
				t.Errorf("%s: GetVersion with a change id that is not a versions.go marker", fset.Position(call.Pos()))
				return true
			}
			if _, ok := listed[id.Name]; !ok {
				t.Errorf("%s: GetVersion(%s) is not listed in versions.go", fset.Position(call.Pos()), id.Name)
			}
			listed[id.Name] = true
			return true
		})
	}
	for name, used := range listed {
		if !used {
			t.Errorf("versions.go lists %s, which no GetVersion asks", name)
		}
	}
}
