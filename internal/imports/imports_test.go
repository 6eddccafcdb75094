// Package imports keeps the package graph as the design draws it: layers,
// each importing only layers below it, so that one launch reads from the
// door to exec in one direction and the probe that runs inside the sandbox
// links only what it uses. It has no code, only this test, which reads each
// package's imports as `go list -deps` would, with go/build in this
// process: the files it opens are what the test cache watches, so an
// import added anywhere runs the test again. TestLayoutTable (table_test.go)
// keeps the README's folder table a map of the same module.
package imports

import (
	"errors"
	"go/build"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/claude-sandbox/claude-sandbox/"

// root is the module root, relative to this package.
const root = "../.."

// layers are every package of the module, lowest first. A package imports
// only packages of the layers below its own: an import sideways or up
// fails TestLayers, and a new package fails it until it is given a layer.
var layers = []struct {
	why  string
	pkgs []string
}{
	{"leaves: one small job each, nothing of the module below them",
		[]string{"internal/atomicfile", "internal/connlimit", "internal/envlist", "internal/foldname", "internal/launchenv", "internal/gitindex", "internal/hostaddr", "internal/layout", "internal/mountinfo", "internal/namerule", "internal/plainfile", "internal/procstatus", "internal/requesttarget", "internal/seccompbpf", "internal/shellcmd", "internal/subtree", "internal/termtext"}},
	{"parts with one subject each: formats, the proxies' and the warden's engines, the feature's metadata, and test seams",
		[]string{"jsonc", "templates", "gitconfig", "upstreamproxy", "authproxy", "forge", "forgeapi", "forgepush", "warden", "features", "gate", "statusline", "workflows",
			"internal/layout/layouttest", "upstreamproxy/proxytest", "testscripts/casefs"}},
	{"the policy as data, the egress proxy, and the feature's packaging",
		[]string{"sandbox", "egress", "features/packaging"}},
	{"what reads the host and the policy for the commands: the host's facts, doctor's checks, the git store, promote",
		[]string{"host", "doctor", "gitstore", "promote"}},
	{"the commands' engines: the launcher, the probe inside, the installer",
		[]string{"launcher", "verify", "installer"}},
	{"the command line",
		[]string{"cli"}},
	{"programs and test harnesses",
		[]string{"cmd/claude-sandbox", "magefiles/targets", "testscripts", "internal/imports", "internal/complexity"}},
}

// forbidden are what the layers allow but the design does not: for each
// package, the packages it must not link, directly or through another, and
// why.
var forbidden = []struct {
	pkg  string
	deny []string
	why  string
}{
	{"promote", []string{"features/packaging"},
		"the shipped promote needs the feature's metadata and the layout, not the packaging and publish code"},
	{"launcher", []string{"promote", "features"},
		"the launcher takes its paths from the layout"},
	{"verify", []string{"promote", "features"},
		"the probe that runs inside the sandbox needs the layout and the host's facts, not the feature's build"},
	{"host", []string{"warden", "egress", "authproxy", "upstreamproxy"},
		"the host's facts are read below everything that acts on them"},
	{"sandbox", []string{"features"},
		"the policy is data: it builds nothing"},
	{"cmd/claude-sandbox", []string{"internal/layout/layouttest", "features/packaging", "testscripts/casefs"},
		"the product reads no test seam, does not build or publish itself, and mounts no test file system"},
}

// imports are the packages of this module that pkg imports directly, for
// this GOOS and GOARCH, relative to the module path.
func imports(t *testing.T, pkg string) []string {
	t.Helper()
	p, err := build.ImportDir(filepath.Join(root, pkg), 0)
	if err != nil {
		t.Fatalf("reading package %s: %v", pkg, err)
	}
	var out []string
	for _, imp := range p.Imports {
		if d, ok := strings.CutPrefix(imp, module); ok {
			out = append(out, d)
		}
	}
	return out
}

// packages are the module's directories that hold a package for this
// build, relative to the root.
func packages(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		_, err = build.ImportDir(path, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLayers(t *testing.T) {
	layer := map[string]int{}
	for i, l := range layers {
		for _, p := range l.pkgs {
			layer[p] = i
		}
	}
	for _, pkg := range packages(t) {
		at, ok := layer[pkg]
		if !ok {
			t.Errorf("package %s has no layer: give it one in layers", pkg)
			continue
		}
		for _, imp := range imports(t, pkg) {
			if layer[imp] >= at {
				t.Errorf("%s (layer %d: %s) imports %s (layer %d): a package imports only layers below its own", pkg, at, layers[at].why, imp, layer[imp])
			}
		}
	}
}

// deps are the packages of this module that pkg links, directly or not,
// for this GOOS and GOARCH, relative to the module path.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	seen := map[string]bool{}
	var visit func(rel string)
	visit = func(rel string) {
		p, err := build.ImportDir(filepath.Join(root, rel), 0)
		if err != nil {
			t.Fatalf("reading package %s: %v", rel, err)
		}
		for _, imp := range p.Imports {
			if d, ok := strings.CutPrefix(imp, module); ok && !seen[d] {
				seen[d] = true
				visit(d)
			}
		}
	}
	visit(pkg)
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func TestForbiddenImports(t *testing.T) {
	for _, f := range forbidden {
		linked := map[string]bool{}
		for _, d := range deps(t, f.pkg) {
			linked[d] = true
		}
		for _, d := range f.deny {
			if linked[d] {
				t.Errorf("%s links %s: %s", f.pkg, d, f.why)
			}
		}
	}
}
