package imports

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// door is the one package that reads the launching environment: cli.Main
// hands it the list and everything below takes its Env.
const door = "internal/launchenv"

// environReaders are the calls that read a process's own environment.
var environReaders = map[string][]string{
	"os":      {"Environ", "Getenv", "LookupEnv"},
	"syscall": {"Environ", "Getenv"},
	"unix":    {"Getenv"},
}

// splitters are the calls that, given "=", take a NAME=value string apart.
var splitters = []string{"Cut", "Split", "SplitN", "SplitAfter", "SplitAfterN", "Index", "IndexByte", "IndexRune", "LastIndex", "LastIndexByte", "Fields"}

// prefixMatchers are the calls that, given "NAME=", pick one variable out
// of NAME=value strings.
var prefixMatchers = []string{"HasPrefix", "CutPrefix", "TrimPrefix"}

// assignment is a literal "NAME=" as Go writes it.
var assignment = regexp.MustCompile(`^"[A-Za-z_][A-Za-z0-9_]*="$`)

// environOutsideDoor are the files besides the door that read an
// environment or split NAME=value strings, and why that is not the
// launch's environment read a second time. A file not listed here that
// starts doing either fails TestEnvironDoor; a listed one that stops
// fails it too, so the list stays what the code does.
var environOutsideDoor = map[string]string{
	"cmd/claude-sandbox/main.go":                "the program's main: it hands os.Environ to cli.Main, which gives it to the door",
	"launcher/init.go":                          "init runs inside the sandbox: it execs the command with the sandbox's own environment, which the plan wrote",
	"launcher/testdata/benchlauncher/main.go":   "the bench launcher: a test program standing in for main, reading its test knobs",
	"launcher/testdata/floorsupervisor/main.go": "the benchmarks' floor: a test program that runs bare bwrap, not a launch, and passes its environment to the command it runs",
	"internal/layout/layouttest/layouttest.go":  "a test seam: the layout of a test install, named by the test's environment",
	"internal/envlist/envlist.go":               "reads environments that are not the launch's: the sandbox's own (verify) and the feature installer's",
	"verify/facts.go":                           "verify reads the sandbox's own environment (/proc/1/environ), which the plan wrote once per name",
	"verify/home.go":                            "verify reads the sandbox's own PATH",
	"verify/credentials.go":                     "verify reads the sandbox's own environment",
	"verify/network.go":                         "verify reads the sandbox's own environment",
	"verify/process.go":                         "verify reads the sandbox's own environment",
	"installer/installer.go":                    "the feature's install step: its own environment, given to apt and read for _REMOTE_USER, never a launch's",
	"installer/sources.go":                      "the feature's install step: the environment it gives the npm it runs",
	"installer/conf.go":                         "parses the conf file's key = value lines, not an environment",
	"gitstore/gitstore.go":                      "the environment given to the git the store runs, git's own variables taken out; read by git, not by the launch",
	"features/packaging/build.go":               "the feature's build: the environment given to go build",
	"features/packaging/cli.go":                 "the feature's build: the environment given to the devcontainer CLI",
	"magefiles/targets/targets.go":              "the build's targets: the environment given to go build",
	"sandbox/conf.go":                           "parses the conf file's key = value lines, not an environment",
	"sandbox/find_commands.go":                  "reads assignments in command files (NAME=value words of a shell line), not an environment",
	"internal/shellcmd/shellcmd.go":             "parses shell words, whose NAME=value assignments are a command's, not the launch's",
	"gitconfig/keys.go":                         "parses git configuration values",
	"warden/index.go":                           "parses a key=value file of the warden's own",
	"forge/credential.go":                       "parses git credential's key=value answer, and gives git credential the launch's environment it was handed",
}

// TestEnvironDoor fails when a package other than the door reads the
// process's environment (os.Environ, os.Getenv, ...) or takes NAME=value
// strings apart, outside the files environOutsideDoor names with a
// reason: the launch reads its environment once, with one rule for a name
// defined twice and one parser for each value.
func TestEnvironDoor(t *testing.T) {
	found := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, door+"/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		found[rel] = environUses(fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for f, uses := range found {
		if len(uses) > 0 {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	for _, f := range files {
		if _, ok := environOutsideDoor[f]; !ok {
			t.Errorf("%s reads an environment outside %s: %s; take the launchenv.Env instead, or name the file in environOutsideDoor with why it is not the launch's environment", f, door, strings.Join(found[f], ", "))
		}
	}
	for f := range environOutsideDoor {
		if len(found[f]) == 0 {
			t.Errorf("environOutsideDoor names %s, which reads no environment: take it out", f)
		}
	}
}

// environUses are the places in f that read an environment: a call of
// environReaders, a splitter given "=" or '=', a prefix match given
// "NAME=", an import of internal/envlist.
func environUses(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == module+"internal/envlist" {
			out = append(out, fset.Position(imp.Pos()).String()+": imports envlist")
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				for _, name := range environReaders[x.Name] {
					if sel.Sel.Name == name {
						out = append(out, fset.Position(sel.Pos()).String()+": "+x.Name+"."+name)
					}
				}
			}
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fn, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !isIdent(fn.X, "strings") {
			return true
		}
		for _, a := range call.Args {
			lit, ok := a.(*ast.BasicLit)
			switch {
			case !ok:
			case contains(splitters, fn.Sel.Name) && (lit.Value == `"="` || lit.Value == `'='`),
				contains(prefixMatchers, fn.Sel.Name) && assignment.MatchString(lit.Value):
				out = append(out, fset.Position(call.Pos()).String()+": strings."+fn.Sel.Name+" on "+lit.Value)
			}
		}
		return true
	})
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
