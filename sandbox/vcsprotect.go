package sandbox

import (
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

// Mercurial, Sapling and Jujutsu outside the sandbox (a shell prompt's
// status, an editor's extension) obey their repository's own
// configuration, as git does: hooks, extensions, commands (ADR 0032). So
// no such repository may appear during a session, and in one that exists
// what runs a program, or sends the tool to another repository, is held.

// vcsDirs are the repository directories of version-control systems other
// than git, and in each what the system reads there that runs a program or
// leads to another repository. This is the one list: the walk looks for
// these names, the warden refuses them, and every one found gets its
// entries held.
var vcsDirs = []struct {
	name string
	// entries are paths in the repository directory; one with a slash
	// lies below a directory of a name too common to refuse everywhere,
	// and is held only where the launch finds it.
	entries []string
	why     string
}{
	// hgrc-not-shared is read besides hgrc in a share; sharedpath makes hg
	// use another repository's store and, with share-safe, its hgrc.
	{".hg", []string{"hgrc", "hgrc-not-shared", "sharedpath"}, "Mercurial outside runs the hooks and extensions its configuration there names, or those of the repository sharedpath names"},
	{".sl", []string{"config", "hgrc", "sharedpath"}, "Sapling outside runs the hooks and extensions its configuration there names, or those of the repository sharedpath names"},
	// Jujutsu before its secure configuration read the repository's
	// config.toml there (fix tools, aliases, pager, diff tools); repo is a
	// file pointing at the main workspace's in a secondary workspace.
	{".jj", []string{"repo/config.toml"}, "Jujutsu outside runs the commands its repository configuration names (fix tools, aliases, pager, diff tools)"},
}

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
