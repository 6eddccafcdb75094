// Package imports keeps the package graph as the design draws it: the
// probe that runs inside the sandbox, promote and the policy link only
// what they use, and the leaves stay leaves. It has no code, only this
// test, which reads each package's imports as `go list -deps` would, with
// go/build in this process: the files it opens are what the test cache
// watches, so an import added anywhere runs the test again.
package imports

import (
	"go/build"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/claude-sandbox/claude-sandbox/"

// root is the module root, relative to this package.
const root = "../.."

// forbidden are, for each package, the packages it must not link, directly
// or through another, and why.
var forbidden = []struct {
	pkg  string
	deny []string
	why  string
}{
	{"verify", []string{"installer", "features", "features/packaging", "promote", "launcher"},
		"the probe that runs inside the sandbox needs the layout and the host's facts, not the installer's downloads, the feature's build or the launcher"},
	{"installer", []string{"launcher", "verify"},
		"the installer reads the host's facts below the launcher (package host), and runs neither"},
	{"doctor", []string{"launcher", "installer", "verify"},
		"the launcher and the installer run doctor's checks: it sits below them"},
	{"host", []string{"launcher", "installer", "verify", "doctor", "warden", "egress", "authproxy", "envproxy"},
		"the host's facts are read below everything that acts on them"},
	{"promote", []string{"features/packaging", "installer", "launcher", "verify"},
		"the shipped promote needs the feature's metadata and the layout, not the packaging and publish code"},
	{"launcher", []string{"installer", "promote", "verify", "features"},
		"the launcher takes its paths from the layout"},
	{"sandbox", []string{"egress", "launcher", "installer", "verify", "promote", "features"},
		"the policy is data; the proxy that enforces its allowlist is not part of it"},
	{"cmd/claude-sandbox", []string{"internal/layout/layouttest", "features/packaging", "testscripts/casefs"},
		"the product reads no test seam, does not build or publish itself, and mounts no test file system"},
}

// leaves import nothing of this module but other leaves.
var leaves = []string{"internal/layout", "internal/hostaddr", "internal/envlist", "internal/procstatus", "internal/mountinfo", "internal/atomicfile", "internal/termtext", "internal/foldname", "internal/seccompbpf"}

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

func TestLeavesStayLeaves(t *testing.T) {
	isLeaf := map[string]bool{}
	for _, l := range leaves {
		isLeaf[l] = true
	}
	for _, l := range leaves {
		for _, d := range deps(t, l) {
			if !isLeaf[d] {
				t.Errorf("the leaf %s links %s", l, d)
			}
		}
	}
}
