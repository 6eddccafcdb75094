package sandbox

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// listsElsewhere are the files besides lists.go that declare a list, and
// why it is not one of the policy's lists.go holds.
var listsElsewhere = map[string]string{
	"confkeys.go": "the conf's schema, a table of its own that other work adds keys to (confkeys_test keeps the docs in step)",
}

// TestListsInOneFile fails when a file of the package other than lists.go
// declares a list at package level (a slice or map written out, or
// appended to one), outside the files listsElsewhere names with a reason:
// someone auditing the policy reads its lists in one place. A listed file
// that no longer declares one fails too, so the exceptions stay what the
// code does.
func TestListsInOneFile(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := map[string][]string{}
	for _, f := range files {
		if f == "lists.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		found[f] = packageLists(file)
	}
	var names []string
	for f, lists := range found {
		if len(lists) > 0 {
			names = append(names, f)
		}
	}
	sort.Strings(names)
	for _, f := range names {
		if _, ok := listsElsewhere[f]; !ok {
			t.Errorf("%s declares %s: a list of the policy belongs in lists.go (or name the file in listsElsewhere with why it is not one)", f, strings.Join(found[f], ", "))
		}
	}
	for f := range listsElsewhere {
		if len(found[f]) == 0 {
			t.Errorf("listsElsewhere names %s, which declares no list: take it out", f)
		}
	}
}

// packageLists are the names of the package-level variables of file whose
// value is a slice or map written out, or appended to one.
func packageLists(file *ast.File) []string {
	var out []string
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.VAR {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, v := range vs.Values {
				if isList(v) {
					out = append(out, vs.Names[i].Name)
				}
			}
		}
	}
	return out
}

// isList reports whether e is a slice, array or map literal, or a call of
// append whose first argument is one.
func isList(e ast.Expr) bool {
	if call, ok := e.(*ast.CallExpr); ok {
		if fn, ok := call.Fun.(*ast.Ident); ok && fn.Name == "append" && len(call.Args) > 0 {
			return isList(call.Args[0])
		}
		return false
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return false
	}
	switch lit.Type.(type) {
	case *ast.ArrayType, *ast.MapType:
		return true
	}
	return false
}
