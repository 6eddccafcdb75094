package sandbox

// defaultProtect are workspace paths that run code outside the sandbox
// later. The workspace's git directory is held as every git directory is
// (gitDirEntries), and a missing one cannot be made (outsideNames).
var defaultProtect = []protectedPath{
	{".devcontainer/", "initializeCommand runs on the host at a rebuild, postCreate as root"},
	{".devcontainer.json", "the dev container's configuration at the other place the spec allows"},
	{".vscode/", "tasks.json, launch.json and settings that name executables, which VS Code runs"},
	{".idea/", "run configurations, which JetBrains IDEs run"},
	{".envrc", "direnv runs it in every shell that enters the workspace"},
	// A Claude Code started here outside the sandbox (an IDE's bundled
	// binary, an SDK app) reads these before any prompt: their env block
	// reaches its own process (the API address its login goes to, a cloud
	// provider's credential program), which no managed setting can switch
	// off; their hooks, MCP servers and helper commands run as well.
	{".claude/settings.json", whyClaudeSettings},
	{".claude/settings.local.json", whyClaudeSettings},
	{".mcp.json", "a Claude Code started outside the sandbox starts its MCP servers"},
	{".claude/scheduled_tasks.json", whyScheduledTasks},
}

// masks are hidden behind an empty tmpfs when they exist, and why.
var masks = []struct{ dir, what string }{
	{"/home", "other users' homes"},
	{"/root", "root's home"},
	{"/run", "runtime sockets (Docker, dbus, ssh-agent), pid files and secrets (/run/secrets)"},
	{"/tmp", "shared temporary files and sockets (X11, VS Code's IPC)"},
	{"/var/tmp", "shared temporary files"},
	{"/var/run", "runtime sockets and secrets, where /var/run is not a link to /run"},
	{"/workspaces", "other projects"},
	{"/mnt", "mounted volumes"},
	{"/media", "mounted volumes"},
}

// MaskedDirs are the directories of masks: other users' homes, other
// projects, runtime sockets and secrets, shared temp files. Each call
// returns a new slice.
func MaskedDirs() []string {
	var out []string
	for _, m := range masks {
		out = append(out, m.dir)
	}
	return out
}

// maskWhy says what the mask over dir hides.
func maskWhy(dir string) string {
	for _, m := range masks {
		if m.dir == dir {
			return "hidden behind an empty tmpfs: " + m.what
		}
	}
	return "hidden behind an empty tmpfs"
}

// systemDirs may never be a workspace or allow-write path, nor contain one.
var systemDirs = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin", "/sys", "/usr", "/var/lib", "/var/run"}

// notWorkspaces are directories that hold more than one project or the
// system, so they can never be the workspace themselves.
var notWorkspaces = []string{"/", "/var", "/home", "/root", "/tmp", "/var/tmp", "/workspaces", "/mnt", "/media", "/opt", "/srv"}

// claudeReadOnly are the parts of ~/.claude a session could use to plant
// code for later sessions or other containers. The launcher creates them
// if missing so they can be bound: a file as an empty JSON object, else a
// directory.
var claudeReadOnly = []homePath{
	{".claude/settings.json", "the user's settings, where hooks live: a session could plant hooks that later sessions and other containers run", true},
	{".claude/settings.local.json", "the local settings of the home as a project: a Claude Code started in the home directory outside the sandbox obeys their env block, hooks and MCP settings before any prompt", true},
	{".claude/hooks", "hook scripts, which later sessions and other containers run", false},
	{".claude/plugins", "plugins carry hooks and MCP servers, which later sessions and other containers run", false},
	{".claude/cowork_plugins", "the plugins Claude Code loads instead of plugins/ in cowork mode (CLAUDE_CODE_USE_COWORK_PLUGINS): they carry hooks and MCP servers, which later sessions and other containers run", false},
	{".claude/local", "an older installer's Claude Code, whose claude a shell alias and other tools run outside the sandbox", false},
	{".claude/daemon.json", "the background service's configuration: Claude Code's service starts the workers listed there without asking anyone, a service started outside the sandbox too", true},
}

// claudeOwnState are the parts of ~/.claude that Claude Code runs or acts on
// without asking anyone (its own file tools refuse to write them) and that
// a session must write to work: inside, each is the workspace's own
// directory (StateDir), so what a session writes there never reaches a
// Claude Code outside, nor another workspace's sessions (ADR 0027).
var claudeOwnState = []homePath{
	{".claude/jobs", "background sessions, which Claude Code's service restarts from the files there with the permissions and commands they name", false},
	{".claude/daemon", "the background service's state, where a file starts a background session", false},
	{".claude/shell-snapshots", "snapshots of the shell setup, one of which every Bash command runs first", false},
	{".claude/session-env", "scripts hooks leave, which Claude Code runs ahead of every Bash command", false},
	{".claude/seed-admin", "git directories of cloud-session uploads, whose configuration git obeys when Claude Code uploads", false},
	{".claude/rm-guard", "scripts that run in place of rm in later shell commands, on a hosted worker", false},
	{".claude/state", "an organization's cached settings, which the next Claude Code applies as the organization's policy, and settings changes staged for the owner to accept", false},
}

// ClaudeOwnState are the paths of claudeOwnState. Each call returns a new
// slice.
func ClaudeOwnState() []string { return rels(claudeOwnState) }

// A homePath is a path relative to the home, and why the policy holds it;
// file tells a file from a directory, for the launcher that creates it.
type homePath struct {
	rel, why string
	file     bool
}

// ClaudeReadOnly are the paths of claudeReadOnly. Each call returns a new
// slice.
func ClaudeReadOnly() []string { return rels(claudeReadOnly) }

// rels are the paths of ps, in a new slice.
func rels(ps []homePath) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.rel)
	}
	return out
}

// ClaudeReadOnlyFile reports whether rel, a path of ClaudeReadOnly, is a
// file (else a directory).
func ClaudeReadOnlyFile(rel string) bool {
	for _, p := range claudeReadOnly {
		if p.rel == rel {
			return p.file
		}
	}
	return false
}

// gitConfigCarried are the variables of the user's git configuration that
// the sandbox's home carries (gitidentity.go), each group with why it is
// harmless inside: none runs a program, holds a secret, or points git at a
// file, a URL or another configuration. An allow-list: a variable not
// named here stays out, whatever it is. A name ending ".*" is its whole
// section. Left out on purpose: signing (user.signingKey, commit.gpgSign,
// gpg.*: the key is not inside), protocol.allow and protocol.ext.allow
// (the ext:: transport runs a command), safe.directory (it trusts another
// user's repository, whose configuration runs programs), rerere.enabled
// (git inside would record resolutions in the repository's rr-cache, which
// git outside applies at the user's next conflict).
var gitConfigCarried = []struct {
	names []string
	why   string
}{
	{[]string{"user.name", "user.email", "author.name", "author.email", "committer.name", "committer.email", "user.useConfigOnly"},
		"the identity commits are made with: a name and an address, which git writes into commits and runs nothing for"},
	{[]string{"init.defaultBranch"}, "the name of a new repository's first branch"},
	{[]string{"core.autocrlf", "core.eol", "core.safecrlf", "core.whitespace", "core.quotePath"},
		"how git converts line endings, flags white space and quotes paths: settings git applies itself, naming no file or program"},
	{[]string{"pull.rebase", "pull.ff", "push.default", "push.autoSetupRemote", "push.followTags", "fetch.prune",
		"merge.conflictStyle", "merge.ff", "rebase.autoStash", "rebase.autoSquash", "rebase.updateRefs"},
		"how pull, push, fetch, merge and rebase behave: choices among git's own behaviours, naming no remote, URL or program"},
	{[]string{"diff.algorithm", "diff.colorMoved", "diff.renames", "diff.mnemonicPrefix", "log.date", "branch.sort", "tag.sort", "column.ui"},
		"how git shows diffs, logs and lists: git's own formats, no external diff or pager"},
	{[]string{"color.*", "advice.*"}, "colours and hints in git's output: display only"},
	{[]string{"protocol.file.allow", "protocol.git.allow", "protocol.http.allow", "protocol.https.allow", "protocol.ssh.allow"},
		"whether git may fetch over these transports (a submodule from a local path needs protocol.file.allow): each a transport git speaks itself, reaching only what the sandbox reaches anyway (a local path it reads, a host the network lets through); protocol.ext.allow and protocol.allow stay out, since ext:: runs a command"},
}
