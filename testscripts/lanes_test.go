package testscripts

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A lane is the tests a developer runs alone, with one command
// (laneCommand, docs/testing.md "Lanes"): the fast lane in seconds, the
// live lane in minutes, the containers and the red-team suite apart.
// `go test -timeout 30m ./...` (.ci/run) runs every lane.
const (
	fastLane       = "fast"
	liveLane       = "live"
	containersLane = "containers"
	redteamLane    = "red-team"
)

// laneOrder is the order docs/testing.md lists the lanes in.
var laneOrder = []string{fastLane, liveLane, containersLane, redteamLane}

// lanes names the lane of every test of this package (TestLanes fails for
// one it does not name). The fast lane is every other package's tests and
// these; a test in another lane starts with lane(t).
var lanes = map[string]string{
	"TestGolden":            fastLane,
	"TestAloneScriptsExist": fastLane,
	"TestRedteamDocs":       fastLane,
	"TestRedteamReadme":     fastLane,
	"TestLanes":             fastLane,
	"TestLive":              liveLane,
	"TestContainer":         containersLane,
	"TestDebian":            containersLane,
	"TestDocker":            containersLane,
	"TestPodman":            containersLane,
	"TestRedteam":           redteamLane,
}

// lane skips the test under -short, which runs the fast lane alone, naming
// the command that runs the test's own lane.
func lane(t *testing.T) {
	t.Helper()
	if l := lanes[t.Name()]; testing.Short() && l != fastLane {
		t.Skipf("-short runs the fast lane; %s is in the %s lane: %s", t.Name(), l, laneCommand(l))
	}
}

// laneCommand is the command that runs the tests of lane l.
func laneCommand(l string) string {
	if l == fastLane {
		return "go test -short ./..."
	}
	var names []string
	for name, in := range lanes {
		if in == l {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	run := strings.Join(names, "|")
	if len(names) > 1 {
		run = "(" + run + ")"
	}
	return fmt.Sprintf("go test -timeout 30m ./testscripts -run '^%s$'", run)
}

// TestLanes fails when a test of this package has no lane, when a test
// outside the fast lane does not start with lane(t) (so -short would run
// it), when a test of the fast lane asks testing.Short (so -short could
// leave it out), and when docs/testing.md does not give each lane's
// command.
func TestLanes(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := map[string]bool{}
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
				continue
			}
			found[fn.Name.Name] = true
			checkLane(t, fset, fn)
		}
		checkShortAsked(t, fset, f)
	}
	for name := range lanes {
		if !found[name] {
			t.Errorf("lanes names %s, which is no test of this package", name)
		}
	}
	checkLaneDocs(t)
}

// checkLane fails when fn has no lane, or is outside the fast lane and
// does not start with lane(t).
func checkLane(t *testing.T, fset *token.FileSet, fn *ast.FuncDecl) {
	name := fn.Name.Name
	l, ok := lanes[name]
	if !ok {
		t.Errorf("%s: %s has no lane: name it in lanes (lanes_test.go)", fset.Position(fn.Pos()), name)
		return
	}
	if l == fastLane {
		return
	}
	if len(fn.Body.List) == 0 || !callsLane(fn.Body.List[0]) {
		t.Errorf("%s: %s is in the %s lane but does not start with lane(t), so go test -short would run it", fset.Position(fn.Pos()), name, l)
	}
}

// callsLane is whether stmt is the call lane(t).
func callsLane(stmt ast.Stmt) bool {
	expr, ok := stmt.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := expr.X.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	fun, ok := call.Fun.(*ast.Ident)
	arg, isIdent := call.Args[0].(*ast.Ident)
	return ok && fun.Name == "lane" && isIdent && arg.Name == "t"
}

// checkShortAsked fails for every testing.Short() in f outside lane: what
// -short leaves out of this package is the lanes' to say.
func checkShortAsked(t *testing.T, fset *token.FileSet, f *ast.File) {
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if ok && fn.Recv == nil && fn.Name.Name == "lane" {
			continue
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Short" {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "testing" {
				t.Errorf("%s: testing.Short() outside lane: say what -short leaves out in lanes (lanes_test.go)", fset.Position(sel.Pos()))
			}
			return true
		})
	}
}

// checkLaneDocs fails unless docs/testing.md's Lanes section has one
// bullet for each lane, in laneOrder, that gives its command.
func checkLaneDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	section, ok := between(string(doc), "\n## Lanes\n", "\n## ")
	if !ok {
		t.Fatal("docs/testing.md has no section ## Lanes")
	}
	var bullets []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "- **") {
			bullets = append(bullets, line)
		}
	}
	if len(bullets) != len(laneOrder) {
		t.Errorf("docs/testing.md: the Lanes section has %d bullets, want one for each of %d lanes (%s)", len(bullets), len(laneOrder), strings.Join(laneOrder, ", "))
	}
	for i, l := range laneOrder {
		if i >= len(bullets) {
			break
		}
		if want := "- **" + l + "**"; !strings.HasPrefix(bullets[i], want) {
			t.Errorf("docs/testing.md: Lanes bullet %d is %q, want it to start with %q", i+1, bullets[i], want)
		}
		if want := "`" + laneCommand(l) + "`"; !strings.Contains(section, want) {
			t.Errorf("docs/testing.md: the Lanes section does not give the %s lane's command %s", l, want)
		}
	}
}

// between returns the text from the end of from to the next to.
func between(text, from, to string) (string, bool) {
	_, after, ok := strings.Cut(text, from)
	if !ok {
		return "", false
	}
	passage, _, ok := strings.Cut(after, to)
	return passage, ok
}
