package sandbox

// A NamedDir is a directory name and the names refused, with everything
// below them, in every directory of that name.
type NamedDir struct {
	Dir   string
	Names []string
	Why   string
}

// namedDirs: git's own entries in every ".git" directory (gitDirEntries),
// in every ".claude" directory Claude Code's project settings, which a
// Claude Code started outside in that directory obeys before any prompt,
// and its scheduled tasks, which it puts to the model unasked, and the
// configuration other version-control systems read in their repository
// directories (vcsDirs), and mise's configuration in its directories
// (selectorDirs).
func namedDirs() []NamedDir {
	git := NamedDir{Dir: ".git", Why: whyGitDir}
	for _, e := range gitDirEntries {
		git.Names = append(git.Names, e.name)
	}
	return append([]NamedDir{git,
		{Dir: ".claude", Names: []string{"settings.json", "settings.local.json"}, Why: whyClaudeSettings},
		{Dir: ".claude", Names: []string{"scheduled_tasks.json"}, Why: whyScheduledTasks}},
		append(vcsNamedDirs(), selectorDirs...)...)
}

const whyClaudeSettings = "a Claude Code started outside the sandbox obeys its env block, hooks and MCP settings before any prompt"

// Inside, CronCreate with durable: true fails with the read-only error; a
// session's own (not durable) tasks work (scheduled_tasks_live).
const whyScheduledTasks = "a Claude Code started outside the sandbox puts the tasks there to the model as prompts nobody typed: a missed one at its start, a recurring one whenever due"

// An OutsideName is a name the sandbox may create only on its own file
// systems (its private /tmp, its home): anywhere else, a program outside
// would obey it.
type OutsideName struct {
	Name string
	Why  string
}

// OutsideNames: git treats any directory holding a ".git" as a repository
// and runs what its configuration and hooks name, whenever the editor, a
// shell prompt or the user runs git there or in a repository that has it as
// a submodule. So no ".git" can appear in the workspace during a session:
// no new repository, no git file pointing at one, no gitlink target. The
// same goes for the other version-control systems' repositories (vcsDirs),
// and for the files that pick the program a toolchain manager runs
// (selectorFiles).
var outsideNames = append([]OutsideName{
	{Name: ".git", Why: "git outside the sandbox would treat this as a repository and run what its config and hooks name"},
	{Name: ".mcp.json", Why: "a Claude Code started outside the sandbox in this directory or below starts its MCP servers"},
}, append(vcsOutsideNames(), selectorOutsideNames()...)...)

// A NameRule refuses the creation of Names directly in Dir. The launcher's
// seccomp supervisor enforces it on every call that creates a name: mkdir,
// mknod, open with O_CREAT, rename, link and symlink.
type NameRule struct {
	Dir   string   // an existing directory, symlinks resolved
	Names []string // refused in every spelling a file system could take for them (ADR 0033)
	Why   string   // shown by argv and in refusals
}

// A PathRule keeps the sandbox from making or writing anything at or below
// Path, a protected path that is missing at launch: should a program
// outside make it during the session (the user's editor makes .vscode/),
// no read-only mount holds it, and the warden refuses in its place. On the
// way to Path only empty directories may be made: no link, no file, no
// directory moved there with Path inside it.
type PathRule struct {
	Path string
	Why  string
}
