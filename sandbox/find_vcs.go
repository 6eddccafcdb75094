package sandbox

import (
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

// Other version-control systems' repositories: the names refused, and
// what is held in each the walk found (vcsDirs, in lists.go, says why).

// vcsOutsideNames are the repository directories of vcsDirs: the sandbox
// may not make one where the outside sees it, in any case (a
// case-insensitive file system finds it in any).
func vcsOutsideNames() []namerule.Outside {
	var out []namerule.Outside
	for _, d := range vcsDirs {
		out = append(out, namerule.Outside{Name: d.name, Why: d.why + ": a repository made here would be obeyed"})
	}
	return out
}

// repositoryNames are the names of every repository's directory: git's
// and those of vcsDirs.
func repositoryNames() []string {
	names := []string{".git"}
	for _, d := range vcsDirs {
		names = append(names, d.name)
	}
	return names
}

// vcsNamedDirs are the entries of vcsDirs that lie directly in the
// repository directory, refused in every directory of that name the
// outside sees, whenever it appeared.
func vcsNamedDirs() []namerule.InNamedDir {
	var out []namerule.InNamedDir
	for _, d := range vcsDirs {
		nd := namerule.InNamedDir{Dir: d.name, Why: d.why}
		for _, e := range d.entries {
			if !strings.Contains(e, "/") {
				nd.Names = append(nd.Names, e)
			}
		}
		if len(nd.Names) > 0 {
			out = append(out, nd)
		}
	}
	return out
}

// vcsHolds are the holds for every repository directory of vcsDirs the
// walk found in the roots: each entry, read-only where it exists, a name
// rule where it is missing; the directories on the way are pinned, the
// repository's too. A link's target is held in its place.
func vcsHolds(found []foundEntry) []hold {
	var out []hold
	for _, e := range found {
		for _, d := range vcsDirs {
			if e.rule != d.name || (e.kind != unix.DT_DIR && e.kind != unix.DT_LNK) {
				continue
			}
			for _, entry := range d.entries {
				out = append(out, hold{path: filepath.Join(e.path, entry), why: d.why})
			}
		}
	}
	return out
}
