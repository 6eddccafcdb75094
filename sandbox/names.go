package sandbox

import "github.com/claude-sandbox/claude-sandbox/internal/namerule"

// namedDirs: git's own entries in every ".git" directory (gitDirEntries),
// in every ".claude" directory Claude Code's project settings, which a
// Claude Code started outside in that directory obeys before any prompt,
// and its scheduled tasks, which it puts to the model unasked, and the
// configuration other version-control systems read in their repository
// directories (vcsDirs), and mise's configuration in its directories
// (selectorDirs).
func namedDirs() []namerule.InNamedDir {
	git := namerule.InNamedDir{Dir: ".git", Why: whyGitDir}
	for _, e := range gitDirEntries {
		git.Names = append(git.Names, e.name)
	}
	return append([]namerule.InNamedDir{git,
		{Dir: ".claude", Names: []string{"settings.json", "settings.local.json"}, Why: whyClaudeSettings},
		{Dir: ".claude", Names: []string{"scheduled_tasks.json"}, Why: whyScheduledTasks}},
		append(vcsNamedDirs(), selectorDirs...)...)
}

const whyClaudeSettings = "a Claude Code started outside the sandbox obeys its env block, hooks and MCP settings before any prompt"

// Inside, CronCreate with durable: true fails with the read-only error; a
// session's own (not durable) tasks work (scheduled_tasks_live).
const whyScheduledTasks = "a Claude Code started outside the sandbox puts the tasks there to the model as prompts nobody typed: a missed one at its start, a recurring one whenever due"

// OutsideNames: git treats any directory holding a ".git" as a repository
// and runs what its configuration and hooks name, whenever the editor, a
// shell prompt or the user runs git there or in a repository that has it as
// a submodule. So no ".git" can appear in the workspace during a session:
// no new repository, no git file pointing at one, no gitlink target. The
// same goes for the other version-control systems' repositories (vcsDirs),
// and for the files that pick the program a toolchain manager runs
// (selectorFiles).
var outsideNames = append([]namerule.Outside{
	{Name: ".git", Why: "git outside the sandbox would treat this as a repository and run what its config and hooks name"},
	{Name: ".mcp.json", Why: "a Claude Code started outside the sandbox in this directory or below starts its MCP servers"},
}, append(vcsOutsideNames(), selectorOutsideNames()...)...)

// NameRules are the rules on names that hold in every directory the
// outside sees, whatever the workspace: the outside names and the names
// refused in directories of a given name. adopt checks an index it
// carries out against them (ADR 0038).
func NameRules() ([]namerule.Outside, []namerule.InNamedDir) {
	return outsideNames, namedDirs()
}
