package sandbox

import (
	"slices"

	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
)

// namedDirs: git's own entries in every ".git" directory (gitDirEntries),
// Claude Code's in every ".claude" directory (claudeNamedDirs), the
// configuration other version-control systems read in their repository
// directories (vcsDirs), and mise's configuration in its directories
// (selectorDirs).
func namedDirs() []namerule.InNamedDir {
	git := namerule.InNamedDir{Dir: ".git", Why: whyGitDir}
	for _, e := range gitDirEntries {
		git.Names = append(git.Names, e.name)
	}
	return slices.Concat([]namerule.InNamedDir{git}, claudeNamedDirs, vcsNamedDirs(), selectorDirs)
}

// NameRules are the rules on names that hold in every directory the
// outside sees, whatever the workspace: the outside names and the names
// refused in directories of a given name. adopt checks an index it
// carries out against them (ADR 0038).
func NameRules() ([]namerule.Outside, []namerule.InNamedDir) {
	return outsideNames, namedDirs()
}
