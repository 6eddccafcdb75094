// Package complexity keeps the security-critical packages readable in one
// sitting: no function of the launcher, the policy or the warden branches
// more than the limit, unless its doc comment says why ("Complexity: ...").
// It has no code, only this test.
package complexity

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// limit is the most a function may branch (cyclomatic complexity, counted
// as gocyclo does) without a reason.
const limit = 15

// checked are the packages held to the limit, relative to the module root.
var checked = []string{"launcher", "sandbox", "warden"}

// cyclomatic is 1 plus the function's branch points: each if, for, range,
// case and select case (but a default), && and ||.
func cyclomatic(fn *ast.FuncDecl) int {
	n := 1
	ast.Inspect(fn, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

func name(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if idx, ok := t.(*ast.IndexExpr); ok {
		t = idx.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

func TestComplexity(t *testing.T) {
	for _, pkg := range checked {
		files, err := filepath.Glob(filepath.Join("../..", pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				if c := cyclomatic(fn); c > limit && !strings.Contains(fn.Doc.Text(), "Complexity:") {
					t.Errorf("%s/%s: %s has complexity %d, above %d: split it, or say why it must stay whole in its doc comment (\"Complexity: ...\")", pkg, filepath.Base(path), name(fn), c, limit)
				}
			}
		}
	}
}
