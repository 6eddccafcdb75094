// The policy's lists: every list of what the policy protects, hides,
// passes or carries, by what it is about. The code that uses a list reads
// it from here; a list written out in the docs is kept equal to its list
// here by TestPolicyDocs, and TestListsInOneFile fails for a list of the
// policy declared in another file.

package sandbox

import (
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
)

// The workspace: the paths held read-only in it, the names refused
// wherever the outside sees, and what the launch's readers look for.

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

const whyClaudeSettings = "a Claude Code started outside the sandbox obeys its env block, hooks and MCP settings before any prompt"

// Inside, CronCreate with durable: true fails with the read-only error; a
// session's own (not durable) tasks work (scheduled_tasks_live).
const whyScheduledTasks = "a Claude Code started outside the sandbox puts the tasks there to the model as prompts nobody typed: a missed one at its start, a recurring one whenever due"

// outsideNames: git treats any directory holding a ".git" as a repository
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

// claudeNamedDirs are what is refused in every ".claude" directory the
// outside sees: Claude Code's project settings, which a Claude Code
// started outside in that directory obeys before any prompt, and its
// scheduled tasks, which it puts to the model unasked.
var claudeNamedDirs = []namerule.InNamedDir{
	{Dir: ".claude", Names: []string{"settings.json", "settings.local.json"}, Why: whyClaudeSettings},
	{Dir: ".claude", Names: []string{"scheduled_tasks.json"}, Why: whyScheduledTasks},
}

// gitDirEntries are what git reads in a git directory that runs a program,
// sends git to other files or repositories, or answers git (a socket). This
// is the one list: every git directory found, the workspace's own included,
// gets it.
var gitDirEntries = []struct {
	name string
	dir  bool
}{
	{"hooks", true},            // run by commits, checkouts, merges
	{"config", false},          // core.fsmonitor, hooksPath, filters, aliases, includes
	{"commondir", false},       // sends git to another directory's config and hooks
	{"modules", true},          // submodules' git directories, with their own config and hooks
	{"worktrees", true},        // linked worktrees' git directories
	{"config.worktree", false}, // like config, read when extensions.worktreeConfig is on (git sparse-checkout turns it on)
	{"rebase-merge", true},     // a rebase's todo list: its exec lines run at git rebase --continue
	{"rebase-apply", true},     // git am and the apply backend of rebase
	{"sequencer", true},        // cherry-pick and revert: a todo list with exec lines too
	// The built-in fsmonitor's socket: with core.fsmonitor = true git
	// connects there and believes what answers about which files changed
	// (git with the daemon: macOS, Windows, Linux since the inotify
	// backend); a socket, FIFO or link of the sandbox's must not be there.
	{"fsmonitor--daemon.ipc", false},
	{"fsmonitor--daemon", true}, // the daemon's cookie files, which it makes and removes there
	// Remotes git reads when the configuration has none of that name:
	// their URL is where a plain git push goes, and a push to a
	// repository on a path runs that repository's hooks.
	{"remotes", true},
	{"branches", true},
}

// Mercurial, Sapling and Jujutsu outside the sandbox (a shell prompt's
// status, an editor's extension) obey their repository's own
// configuration, as git does: hooks, extensions, commands (ADR 0032). So
// no such repository may appear during a session, and in one that exists
// what runs a program, or sends the tool to another repository, is held.
//
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

// A shell prompt, an editor's language support and shell plugins run a
// toolchain whenever a directory is entered (rustc --version, node
// --version), and a toolchain manager picks the program from a file in
// that directory or one above it: rustup's proxies run the toolchain a
// rust-toolchain.toml's path names, Yarn runs its yarnPath. A file the
// sandbox wrote there would pick a program it planted, run outside by
// nobody's choice (ADR 0032). Files that pick only a version name (the
// tool's own directories or a registry supply the program) are not here.
const (
	whyRustup = "rustup's proxies outside (a prompt's rustc --version, rust-analyzer) run the toolchain its path names"
	whyYarn   = "yarn outside runs the program its yarnPath (yarn-path in Yarn 1) names"
	whyMise   = "mise outside runs its hooks and the scripts its env sources in every shell that enters the directory, and the programs its path: versions name"
	whyTools  = "asdf's and mise's shims outside run the program a path: version there names"
	whyDotenv = "oh-my-zsh's dotenv plugin sources it as shell code in every shell that enters the directory"
)

// selectorFiles are the files, at any depth, that pick the program a tool
// outside runs by itself. This is the one list: the walk looks for these
// names, the warden refuses them where the outside sees them, and every one
// found is held read-only.
var selectorFiles = []struct{ name, why string }{
	{"rust-toolchain.toml", whyRustup},
	{"rust-toolchain", whyRustup},
	{".yarnrc.yml", whyYarn},
	{".yarnrc", whyYarn},
	{".tool-versions", whyTools},
	{"mise.toml", whyMise},
	{".mise.toml", whyMise},
	{"mise.local.toml", whyMise},
	{".mise.local.toml", whyMise},
	{".env", whyDotenv},
}

// selectorDirs are mise's configuration in directories of its own names,
// refused with everything below them in every directory of that name the
// outside sees.
var selectorDirs = []namerule.InNamedDir{
	{Dir: ".config", Names: []string{"mise.toml", "mise"}, Why: whyMise},
	{Dir: ".mise", Names: []string{"config.toml"}, Why: whyMise},
	{Dir: "mise", Names: []string{"config.toml"}, Why: whyMise},
}

// commandKeys are the settings that name a program Claude Code runs:
// Claude Code's own list of command-valued settings, less policyHelpers,
// which only managed settings may set.
var commandKeys = []string{"apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "fileSuggestion", "gcpAuthRefresh",
	"otelHeadersHelper", "processWrapper", "proxyAuthHelper", "statusLine", "subagentStatusLine"}

// The host: what is hidden, and what may never be the workspace or be
// written.

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

// codeRoots are where, outside the homes, software and the caches builds
// draw from live by convention. /usr and the other system directories are
// refused as such.
var codeRoots = []struct{ dir, what string }{
	{"/opt", "holds installed software and toolchains"},
	{"/go", "is the Go images' GOPATH, modules and installed commands"},
	{"/nix", "is the Nix store"},
	{"/snap", "holds snap packages"},
	{"/var/cache", "holds shared package and build caches"},
}

// envMarkers mark a directory whose contents run when it is used: found at
// an allow-write path or above it, they make it code-feeding.
var envMarkers = []struct{ name, what string }{
	{".git", "the git repository"},
	{"pyvenv.cfg", "the Python virtual environment"},
	{"conda-meta", "the conda environment"},
}

// The home: what of ~/.claude is read-only or the workspace's own, and
// what of the user's home the sandbox's carries or drops.

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

// forgeHome are the forge CLIs' credential stores, dropped from share-home by no-forge.
var forgeHome = []string{".config/gh", ".config/glab-cli"}

// homeGuards are the directories of a home that decide how the next shell,
// login or Claude session starts. With the files directly in a home (its rc
// and config files: .bashrc, .profile, .gitconfig, .claude.json, ...) no key
// makes them writable.
var homeGuards = []string{".ssh", ".config", ".local/bin", ".claude", layout.UserCache}

// claudeHome are the home paths the sandbox binds itself: a sandbox-cache
// may not hide them.
var claudeHome = []string{".claude", ".claude.json", ".local/bin/claude"}

// The environment: what passes from the caller, what never does, what
// the launcher sets, and the login's variables and hosts.

// Variables passed from the launching environment without any conf line.
var (
	passedNames = map[string]bool{
		"TERM": true, "COLORTERM": true, "LANG": true, "TZ": true, "VIRTUAL_ENV": true,
		"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "ALL_PROXY": true,
		"http_proxy": true, "https_proxy": true, "no_proxy": true, "all_proxy": true,
	}
	passedPrefixes = []string{"LC_", "ANTHROPIC_", "CLAUDE_CODE_"}
)

// Names that change what runs (loaders, shells, interpreters, git). No conf
// line and no prefix rule can pass them, nor those the launcher sets
// (launcherVars).
var (
	neverNames = map[string]string{
		"BASH_ENV": "runs code in every shell", "ENV": "runs code in every shell",
		"PROMPT_COMMAND": "runs code in every shell", "PS4": "runs code in traced shells",
		"SHELLOPTS": "changes every shell", "BASHOPTS": "changes every shell", "IFS": "changes every shell",
		"CDPATH":       "changes every shell",
		"NODE_OPTIONS": "injects code into node", "NODE_PATH": "injects code into node",
		"PYTHONSTARTUP": "injects code into python", "PYTHONPATH": "injects code into python",
		"PYTHONHOME": "injects code into python", "PERL5OPT": "injects code into perl",
		"PERL5LIB": "injects code into perl", "RUBYOPT": "injects code into ruby", "RUBYLIB": "injects code into ruby",
		"GIT_EXEC_PATH": "changes what git runs", "GIT_ASKPASS": "changes what git runs",
		"GIT_PROXY_COMMAND": "changes what git runs", "GIT_EXTERNAL_DIFF": "changes what git runs",
		"GIT_PAGER": "changes what git runs", "GIT_EDITOR": "changes what git runs",
		"GIT_SEQUENCE_EDITOR": "changes what git runs", "GIT_TEMPLATE_DIR": "changes what git runs",
		"GIT_DIR": "changes which repository git uses", "GIT_WORK_TREE": "changes which repository git uses",
		"CLAUDE_CONFIG_DIR": "moves Claude's config out of the bound ~/.claude",
		"CLAUDE_CODE_PROCESS_WRAPPER": "names the program Claude Code starts its background service and relaunches through: " +
			"a caller's choice must not follow a session in; the launcher sets its own for background sessions (ADR 0023, 0026)",
	}
	neverPrefixes = map[string]string{
		"LD_":             "changes what the dynamic loader runs",
		"BASH_FUNC_":      "exports shell functions",
		"GIT_CONFIG":      "injects git configuration",
		"GIT_SSH":         "changes what git runs",
		"CLAUDE_SANDBOX_": "controls the launcher itself",
	}
)

// forgeTokens never enter when no-forge is set, even if pass-env names them.
var forgeTokens = []string{
	"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
	"GITLAB_TOKEN", "GITLAB_ACCESS_TOKEN", "CI_JOB_TOKEN",
}

// launcherVars are the variables the launcher sets whatever the caller's
// environment holds, last; no conf line can pass them (neverPassed).
var launcherVars = []struct {
	name, why string
	value     func(c *Conf, l Launch) string
}{
	{"HOME", whyPasswd, func(_ *Conf, l Launch) string { return l.Home }},
	{"USER", whyPasswd, func(_ *Conf, l Launch) string { return l.User }},
	{"LOGNAME", whyPasswd, func(_ *Conf, l Launch) string { return l.User }},
	{"SHELL", whyPasswd, func(_ *Conf, l Launch) string { return l.Shell }},
	{"PATH", "the system's directories, then append-path, then ~/.local/bin, then $VIRTUAL_ENV/bin: appended, never prepended", launchPath},
	{"IS_SANDBOX", "Claude Code accepts --dangerously-skip-permissions from root only with it", func(*Conf, Launch) string { return "1" }},
	{"DISABLE_AUTOUPDATER", "the real binary is read-only inside and updated by the install, not by a session", func(*Conf, Launch) string { return "1" }},
}

const whyPasswd = "from the passwd database, never from the caller"

// credentialVars hold a login Claude Code would use. With the credential
// proxy none of them enters: Claude gets the proxy and a session token.
var credentialVars = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL"}

// cloudVars switch Claude Code to a cloud provider, whose credentials the
// proxy does not handle.
var cloudVars = []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"}

// claudeHosts are what Claude Code itself needs when its login is inside the
// sandbox (credentials = inside, or no login yet): the API and the login flow.
var claudeHosts = []string{"api.anthropic.com", "console.anthropic.com", "platform.claude.com", "claude.ai"}

// The proxy variables the launcher sets or drops. proxyVars name its
// egress proxy in allowlist mode, whatever the caller's held; allProxyVars
// are dropped there, since the proxy speaks HTTP and a SOCKS ALL_PROXY
// from the caller would only fail; noProxyVars keep loopback from any
// proxy.
var (
	proxyVars    = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}
	allProxyVars = []string{"ALL_PROXY", "all_proxy"}
	noProxyVars  = []string{"NO_PROXY", "no_proxy"}
)

// forgeAPIHosts are the forges whose REST and GraphQL API is on a host of
// its own. Other forges (GitLab, Gitea, GitHub Enterprise Server) serve
// theirs below the forge's host.
var forgeAPIHosts = map[string]string{"github.com": "api.github.com"}

// forgeAPIWrites are the writes a session may send the GitHub API
// (api.github.com) with the user's credential, beside every read and
// whatever forge-api adds or takes away (ADR 0044): opening and discussing
// issues and pull requests, as gh and the GitHub Action's tools do. None
// moves a ref (a branch moves only by a push, through the push rules),
// changes a repository's settings, runs a workflow, or grants access.
var forgeAPIWrites = []struct{ rule, why string }{
	{"POST /repos/*/*/issues", "open an issue"},
	{"POST /repos/*/*/issues/*/comments", "comment on an issue or a pull request"},
	{"PATCH /repos/*/*/issues/comments/*", "edit such a comment (the Action's progress comment)"},
	{"POST /repos/*/*/pulls", "open a pull request from a branch the push rules let be pushed"},
	{"POST /repos/*/*/pulls/*/comments", "comment on a pull request's lines (the Action's inline comments)"},
	{"POST /repos/*/*/pulls/*/comments/*/replies", "answer such a comment"},
	{"PATCH /repos/*/*/pulls/comments/*", "edit such a comment"},
	{"mutation createIssue", "open an issue (gh issue create)"},
	{"mutation addComment", "comment on an issue or a pull request (gh issue comment, gh pr comment)"},
	{"mutation updateIssueComment", "edit such a comment"},
	{"mutation createPullRequest", "open a pull request (gh pr create)"},
}

// systemCABundles are where the system keeps its certificate authorities in
// one file, as Go's crypto/x509 looks for them on Linux.
var systemCABundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}
