package imports

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLayoutTable keeps the README's folder table (its Layout section) a
// map of the whole module: it fails when a top-level folder, or a package
// under internal/, has no row, and when a row names a path that is not
// there. A folder is named by itself (`warden/`) or by a path below it
// (`cmd/claude-sandbox/`); folders .gitignore lists are nobody's.
func TestLayoutTable(t *testing.T) {
	named := layoutTableNames(t)
	for name := range named {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Errorf("README.md's Layout table names %s, which is not in the repository", name)
		}
	}
	ignored := gitignoredFolders(t)
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == ".git" || ignored[e.Name()] {
			continue
		}
		if !namesFolder(named, e.Name()) {
			t.Errorf("README.md's Layout table has no row for the folder %s/: add one saying what it holds", e.Name())
		}
	}
	for _, pkg := range internalPackages(t) {
		if !named[pkg+"/"] {
			t.Errorf("README.md's Layout table has no row naming %s/: add it, with what the package does", pkg)
		}
	}
}

// namesFolder is whether named holds dir/ or a path below it.
func namesFolder(named map[string]bool, dir string) bool {
	for name := range named {
		if strings.HasPrefix(name, dir+"/") {
			return true
		}
	}
	return false
}

var backquoted = regexp.MustCompile("`([^`]+)`")

// layoutTableNames are the paths the first column of the README's Layout
// table names, in backquotes.
func layoutTableNames(t *testing.T) map[string]bool {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal("README.md has no section ## Layout")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	named := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) < 2 {
			continue
		}
		for _, m := range backquoted.FindAllStringSubmatch(cells[0], -1) {
			named[m[1]] = true
		}
	}
	if len(named) == 0 {
		t.Fatal("README.md's Layout section has no table naming paths")
	}
	return named
}

// gitignoredFolders are the top-level folders .gitignore lists (bin/,
// dist/: what builds leave).
func gitignoredFolders(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if name := strings.Trim(strings.TrimSpace(line), "/"); name != "" && !strings.ContainsAny(name, "/*#!") {
			out[name] = true
		}
	}
	return out
}

// internalPackages are the packages under internal/, relative to the
// module root.
func internalPackages(t *testing.T) []string {
	var out []string
	for _, p := range packages(t) {
		if strings.HasPrefix(p, "internal/") {
			out = append(out, p)
		}
	}
	return out
}
