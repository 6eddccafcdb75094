package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Fixed paths of the product.
const (
	RealBinary = "/usr/libexec/claude-sandbox/claude" // the real Claude Code, off PATH
	// InsideMarker exists only inside a sandbox: it is created on the
	// sandbox's private /run, and outside only root could create it.
	InsideMarker = "/run/claude-sandbox/inside"
	// OutsideSettings is Claude Code's managed settings for a Claude Code
	// started outside the sandbox: no hooks, MCP servers or helper commands
	// but the managed ones (ADR 0017). A managed drop-in applies to every
	// Claude Code on the machine, so the sandbox covers it with
	// InsideSettings, which sets nothing: sessions inside keep the user's
	// hooks and MCP servers.
	OutsideSettings = "/etc/claude-code/managed-settings.d/claude-sandbox-outside.json"
	InsideSettings  = "/usr/libexec/claude-sandbox/inside-settings.json"
)

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
// projects, runtime sockets and secrets, shared temp files.
var MaskedDirs = func() []string {
	var out []string
	for _, m := range masks {
		out = append(out, m.dir)
	}
	return out
}()

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
// if missing so they can be bound.
var claudeReadOnly = []homePath{
	{".claude/settings.json", "the user's settings, where hooks live: a session could plant hooks that later sessions and other containers run"},
	{".claude/hooks", "hook scripts, which later sessions and other containers run"},
	{".claude/plugins", "plugins carry hooks and MCP servers, which later sessions and other containers run"},
	{".claude/local", "an older installer's Claude Code, whose claude a shell alias and other tools run outside the sandbox"},
}

// A homePath is a path relative to the home, and why the policy holds it.
type homePath struct{ rel, why string }

// ClaudeReadOnly are the paths of claudeReadOnly.
var ClaudeReadOnly = func() []string {
	var out []string
	for _, p := range claudeReadOnly {
		out = append(out, p.rel)
	}
	return out
}()

// Launch holds the facts of one launch. Paths are absolute with symlinks
// resolved.
type Launch struct {
	User    string   // from the passwd database, never the environment
	Home    string   // from the passwd database
	Homes   []string // every home the passwd database names, as it names them
	Shell   string   // from the passwd database
	Cwd     string   // the kernel's idea of the working directory
	Environ []string // the caller's environment
	Args    []string // arguments for Claude Code
	// RealBinary is sandbox.RealBinary in every launch; tests use a stand-in.
	RealBinary string
	Masks      []string // the MaskedDirs that exist here, hidden behind an empty tmpfs
	Keep       []string // files under Masks that the system needs, bound back read-only
	Launcher   string   // the launcher's own binary, bound inside to run init
	// OutsideSettings is the managed lock-down for Claude Code started
	// outside, covered inside by InsideSettings; "" when there is none.
	OutsideSettings string
	InsideSettings  string // sandbox.InsideSettings in every launch; tests use a stand-in
	// AuthToken is the session token Claude gets in place of its login when
	// the launcher proxies the credential; "" when it does not.
	AuthToken string
	AuthAddr  string // the credential proxy's address in open mode
	// GitWalk, when set, keeps the walk for git repositories between plans
	// of one launch; nil walks at every plan.
	GitWalk *GitWalk
}

// A NamedDir is a directory name and the names refused, with everything
// below them, in every directory of that name.
type NamedDir struct {
	Dir   string
	Names []string
	Why   string
}

// namedDirs: git's own entries in every ".git" directory (gitDirEntries),
// and Claude Code's project settings in every ".claude" directory, which a
// Claude Code started outside in that directory obeys before any prompt.
func namedDirs() []NamedDir {
	git := NamedDir{Dir: ".git", Why: whyGitDir}
	for _, e := range gitDirEntries {
		git.Names = append(git.Names, e.name)
	}
	return []NamedDir{git, {Dir: ".claude", Names: []string{"settings.json", "settings.local.json"}, Why: whyClaudeSettings}}
}

const whyClaudeSettings = "a Claude Code started outside the sandbox obeys its env block, hooks and MCP settings before any prompt"

// An OutsideName is a name the sandbox may create only on its own file
// systems (its private /tmp, its home): anywhere else, a program outside
// would obey it.
type OutsideName struct {
	Name     string
	FoldCase bool // a case-insensitive file system would find it in any case
	Why      string
}

// OutsideNames: git treats any directory holding a ".git" as a repository
// and runs what its configuration and hooks name, whenever the editor, a
// shell prompt or the user runs git there or in a repository that has it as
// a submodule. So no ".git" can appear in the workspace during a session:
// no new repository, no git file pointing at one, no gitlink target.
var outsideNames = []OutsideName{
	{Name: ".git", FoldCase: true, Why: "git outside the sandbox would treat this as a repository and run what its config and hooks name"},
	{Name: ".mcp.json", Why: "a Claude Code started outside the sandbox in this directory or below starts its MCP servers"},
}

// A NameRule refuses the creation of Names directly in Dir. The launcher's
// seccomp supervisor enforces it on every call that creates a name: mkdir,
// mknod, open with O_CREAT, rename, link and symlink.
type NameRule struct {
	Dir   string   // an existing directory, symlinks resolved
	Names []string // names compared as they are, byte for byte
	Why   string   // shown by argv --explain and in refusals
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

// File descriptors the launcher hands to bwrap, in this order.
const (
	ArgsFD    = 3
	SeccompFD = 4
	StatusFD  = 5
)

// Build checks the conf against this launch and returns the plan. Every
// refusal is an error naming what to change.
func Build(c *Conf, s SessionEnv, l Launch) (*Plan, error) {
	if l.Home == "/" || !filepath.IsAbs(l.Home) || underAny(l.Home, systemDirs) {
		return nil, fmt.Errorf("user %s has home %q, which cannot be replaced by a private home; give the user a real home directory", l.User, l.Home)
	}
	ws, err := Workspace(c, l)
	if err != nil {
		return nil, err
	}
	if err := CheckCredentialMode(c, l.Environ); err != nil {
		return nil, err
	}
	plan := &Plan{Workspace: ws, Namespaces: namespaces(c)}
	plan.add(OpRoBind, "/", "/", RuleRoot, "the host's file system, read-only: its programs and libraries, nothing of them writable")
	plan.add(OpDev, "", "/dev", RuleDev, "a new /dev: the harmless devices, a private /dev/shm, its own devpts; no disk or other hardware")
	plan.add(OpProc, "", "/proc", RuleProc, "a new /proc of the sandbox's own processes: no other process's command line or environment")
	plan.add(OpRoBind, "/proc/sys", "/proc/sys", RuleProcSys, "kernel settings are checked against the file's owner, not capabilities: a root session could otherwise set kernel.core_pattern to a program the host runs as root")
	private := []string{"/run"}
	plan.add(OpTmpfs, "", "/run", RuleMask, maskWhy("/run")+"; always, since the inside marker lives there")
	for _, d := range l.Masks {
		if d != "/run" {
			plan.add(OpTmpfs, "", d, RuleMask, maskWhy(d))
			private = append(private, d)
		}
	}
	for _, f := range l.Keep {
		plan.add(OpRoBind, f, f, RuleKeep, "a file under a mask that the system needs, bound back read-only (resolv.conf links into /run with systemd-resolved)")
	}
	plan.add(OpDir, "", filepath.Dir(InsideMarker), RuleInsideMarker, "the sandbox's own directory on its private /run")
	plan.add(OpDir, "", InsideMarker, RuleInsideMarker, "the marker only a sandbox has: a nested claude runs the real binary, the prompt gate lets prompts through (ADR 0003)")
	plan.add(OpRoBind, l.Launcher, InitPath, RuleInit, "the launcher's own binary, which runs first as init: it opens the proxies' sockets, starts the warden and runs Claude (ADR 0011, 0012)")

	home := l.Home
	plan.add(OpTmpfs, "", home, RuleHome, "an empty home: nothing of the real one (keys, tokens, rc files, history) but what is bound back below")
	private = append(private, home)
	plan.add(OpRoBind, l.RealBinary, filepath.Join(home, ".local/bin/claude"), RuleRealBinary, "the real Claude Code, read-only where its self-check expects it")
	plan.add(OpBind, filepath.Join(home, ".claude"), filepath.Join(home, ".claude"), RuleClaudeState, "Claude Code's sessions, history and state, kept between sessions")
	plan.add(OpBind, filepath.Join(home, ".claude.json"), filepath.Join(home, ".claude.json"), RuleClaudeState, "Claude Code's state and the user's project settings, kept between sessions")
	commands, err := ClaudeCommandFiles(home)
	if err != nil {
		return nil, err
	}
	readOnlyHome := append([]homePath{}, claudeReadOnly...)
	for _, p := range commands {
		rel, _ := filepath.Rel(home, p)
		readOnlyHome = append(readOnlyHome, homePath{rel, "~/.claude/settings.json names it in a command, which a Claude Code outside the sandbox runs too"})
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			plan.CommandFiles = append(plan.CommandFiles, p)
		}
	}
	for _, p := range readOnlyHome {
		// A link would defeat the read-only bind: the mount lands on its
		// target, and the link itself, in the writable ~/.claude, could be
		// replaced by a file of the session's. So would a link on the way
		// below ~/.claude.
		claudeDir := filepath.Join(home, ".claude")
		for dir := filepath.Join(home, p.rel); dir != claudeDir && within(claudeDir, dir); dir = filepath.Dir(dir) {
			if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				rel, _ := filepath.Rel(home, dir)
				return nil, fmt.Errorf("~/%s is a symbolic link; the sandbox keeps it read-only, which it cannot do through a link (the session could replace the link); replace the link with a copy of its target: t=$(readlink -f %s) && rm %s && cp -r \"$t\" %s", rel, dir, dir, dir)
			}
		}
		plan.add(OpRoBind, filepath.Join(home, p.rel), filepath.Join(home, p.rel), RuleClaudeReadOnly, p.why)
	}
	plan.add(OpTmpfs, "", filepath.Join(home, ".claude/ide"), RuleIDELocks, "the IDE extension's lock files hold the port and token of a websocket whose tools run outside the sandbox")
	noForge := c.NoForge || s.NoForge
	for _, sh := range c.ShareHome {
		rel := strings.TrimSuffix(sh.Value, "/")
		if noForge && underAny(rel, forgeHome) {
			continue
		}
		p := filepath.Join(home, rel)
		plan.add(OpRoBindTry, p, p, RuleShareHome, fmt.Sprintf("share-home = %s in %s:%d: read-only, when it exists", sh.Value, c.Source, sh.Line))
	}

	protect := append([]protectedPath{}, defaultProtect...)
	for _, p := range c.Protect {
		protect = append(protect, protectedPath{p.Value, fmt.Sprintf("protect = %s in %s:%d", p.Value, c.Source, p.Line)})
	}
	for _, p := range s.Protect {
		protect = append(protect, protectedPath{p, "CLAUDE_SANDBOX_PROTECT of the launching environment"})
	}
	derived, err := DerivedProtect(ws)
	if err != nil {
		return nil, err
	}
	for _, p := range derived {
		protect = append(protect, protectedPath{p, "named by the dev container's configuration: a rebuild runs it"})
	}
	// Sandbox caches: home paths kept between sessions in a directory only
	// the sandbox uses (ADR 0013).
	roots := []string{ws} // where the sandbox can write
	for _, sc := range c.SandboxCache {
		dir := CacheDir(home, ws, sc.Value)
		plan.add(OpBind, dir, filepath.Join(home, strings.TrimSuffix(sc.Value, "/")), RuleSandboxCache,
			fmt.Sprintf("sandbox-cache = %s in %s:%d: the workspace's own directory, kept between its sessions, seen only inside (ADR 0013)", sc.Value, c.Source, sc.Line))
		plan.Caches = append(plan.Caches, dir)
	}
	w := &writeCheck{ws: ws, home: home, passwdHomes: l.Homes, protect: protect, caches: c.SandboxCache,
		product: map[string]string{c.Source: "the conf", l.RealBinary: "the real Claude Code binary"}}
	for _, d := range c.AppendPath {
		if r, err := filepath.EvalSymlinks(d.Value); err == nil {
			w.path = append(w.path, r)
		}
		w.path = append(w.path, d.Value)
	}
	for _, k := range []struct {
		key        string
		lines      []Line
		executable bool
		why        string
	}{{"allow-write", c.AllowWrite, false, ""}, {"allow-write-executable", c.AllowWriteExecutable, true, ": the admin accepts that what is written there runs outside the sandbox (ADR 0013)"}} {
		for _, aw := range k.lines {
			p, err := w.check(aw.Value, k.executable)
			if err != nil {
				return nil, &ConfError{File: c.Source, Line: aw.Line, Msg: fmt.Sprintf("%s = %s %v", k.key, aw.Value, err)}
			}
			plan.add(OpBind, p, p, RuleAllowWrite, fmt.Sprintf("%s = %s in %s:%d%s", k.key, aw.Value, c.Source, aw.Line, k.why))
			roots = append(roots, p)
		}
	}

	plan.add(OpBind, ws, ws, RuleWorkspace, workspaceWhy(c, l, ws))
	git, err := protectGit(ws, roots, home, l.Environ, l.GitWalk)
	if err != nil {
		return nil, err
	}
	mounts, missing, err := protections(roots, append(relHolds(ws, protect), git.holds...))
	if err != nil {
		return nil, err
	}
	plan.NameRules, plan.PathRules = nameRules(mounts, append(missing, git.names...)), pathRules(mounts, missing)
	for _, m := range mounts {
		switch m.kind {
		case pin:
			plan.add(OpBind, m.path, m.path, RulePin, m.why)
		case readOnly:
			plan.add(OpRoBind, m.path, m.path, RuleProtected, m.why)
		}
	}

	if l.OutsideSettings != "" {
		// A regular file: Claude Code stops at a settings file that is a
		// device (/dev/null) with a dialog. Last, so that no bind lands on
		// top of it.
		if fi, err := os.Stat(l.InsideSettings); err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s, which covers %s inside the sandbox, is missing; run `sudo claude-sandbox install`", l.InsideSettings, l.OutsideSettings)
		}
		plan.add(OpRoBind, l.InsideSettings, l.OutsideSettings, RuleInsideSettings,
			"the managed lock-down for a Claude Code started outside the sandbox, covered by settings that set nothing: sessions inside keep the user's hooks and MCP servers (ADR 0017)")
	}
	plan.Chdir, plan.SeccompFD, plan.StatusFD = l.Cwd, SeccompFD, StatusFD
	env := envFromCaller(c, noForge, l.Environ)
	if plan.Listen, err = network(plan, c, l, env); err != nil {
		return nil, err
	}
	if plan.Listen != nil {
		if plan.Egress, err = EgressPolicy(c, l.Environ, l.AuthToken != ""); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(env))
	for n := range env {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		plan.Env = append(plan.Env, env[n])
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, d := range c.AppendPath {
		path += ":" + d.Value
	}
	path += ":" + filepath.Join(home, ".local/bin")
	if venv, ok := lookup(l.Environ, "VIRTUAL_ENV"); ok && filepath.IsAbs(venv) && !strings.Contains(venv, ":") {
		path += ":" + filepath.Join(venv, "bin")
	}
	for _, v := range []struct{ name, value, why string }{
		{"HOME", home, whyPasswd},
		{"USER", l.User, whyPasswd},
		{"LOGNAME", l.User, whyPasswd},
		{"SHELL", l.Shell, whyPasswd},
		{"PATH", path, "the system's directories, then append-path, then ~/.local/bin, then $VIRTUAL_ENV/bin: appended, never prepended"},
		{"IS_SANDBOX", "1", "Claude Code accepts --dangerously-skip-permissions from root only with it"},
		{"DISABLE_AUTOUPDATER", "1", "the real binary is read-only inside and updated by the install, not by a session"},
	} {
		plan.Env = append(plan.Env, launcherVar(v.name, v.value, v.why))
	}

	plan.OutsideNames, plan.Private = outsideNames, private
	plan.InNamedDirs = namedDirs()
	plan.Claude = append([]string{filepath.Join(home, ".local/bin/claude"), "--no-chrome"}, ClaudeArgs(l.Args)...)
	plan.Command = InitCommand(plan.Listen, private, plan.Claude)
	return plan, nil
}

const whyPasswd = "from the passwd database, never from the caller"

func (p *Plan) add(op Op, src, dest string, rule Rule, why string) {
	p.Mounts = append(p.Mounts, Mount{Op: op, Source: src, Dest: dest, Rule: rule, Why: why})
}

// namespaces are the sandbox's own: all but the network's always, the
// network's in allowlist mode.
func namespaces(c *Conf) []Namespace {
	ns := []Namespace{
		{UnshareUser, "capabilities only over the sandbox's own namespaces, none over the host's"},
		{UnshareIPC, "the host's System V IPC and POSIX message queues are out of reach"},
		{UnsharePID, "the host's processes can be neither seen nor signalled"},
		{UnshareUTS, "the host name the sandbox changes is its own"},
		{UnshareCgroupTry, "the host's cgroup tree is not shown, where the kernel has cgroup namespaces"},
	}
	if c.NetworkMode() == NetworkAllowlist {
		ns = append(ns, Namespace{UnshareNet, "network = allowlist: loopback only, and the launcher's egress proxy the one way out"})
	}
	return ns
}

// workspaceWhy says how the workspace was chosen.
func workspaceWhy(c *Conf, l Launch, ws string) string {
	switch {
	case c.WorkspaceRoot != "":
		return fmt.Sprintf("the workspace, writable: workspace-root in %s:%d", c.Source, c.workspaceLine)
	case ws != l.Cwd:
		return "the workspace, writable: the top of the git repository the working directory is in"
	}
	return "the workspace, writable: the working directory"
}

func launcherVar(name, value, why string) EnvVar {
	return EnvVar{Name: name, Value: value, Shown: value, Source: FromLauncher, Why: why}
}

// ClaudeArgs drops --chrome; the launcher always adds --no-chrome.
func ClaudeArgs(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "--chrome" || a == "--no-chrome" {
			continue
		}
		out = append(out, a)
	}
	return out
}

// envFromCaller is the allow-listed part of the caller's environment.
func envFromCaller(c *Conf, noForge bool, environ []string) map[string]EnvVar {
	extra := map[string]Line{}
	for _, p := range c.PassEnv {
		extra[p.Value] = p
	}
	if noForge {
		for _, t := range ForgeTokens {
			delete(extra, t)
		}
	}
	env := map[string]EnvVar{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || neverPassed(name) != "" {
			continue
		}
		v := EnvVar{Name: name, Value: value, Shown: ShownPassed, Source: FromCaller, Why: "the caller's: the allow list passes it"}
		line, named := extra[name]
		switch {
		case passedByDefault(name):
		case named:
			v.Source, v.Why = FromPassEnv, fmt.Sprintf("the caller's: pass-env = %s in %s:%d", name, c.Source, line.Line)
		default:
			continue
		}
		env[name] = v
	}
	return env
}

func lookup(environ []string, name string) (string, bool) {
	for _, kv := range environ {
		if n, v, ok := strings.Cut(kv, "="); ok && n == name {
			return v, true
		}
	}
	return "", false
}

// Workspace picks the writable root: the conf's workspace-root, else the git
// top-level of the working directory, else the working directory.
func Workspace(c *Conf, l Launch) (string, error) {
	ws := c.WorkspaceRoot
	if ws != "" {
		resolved, err := filepath.EvalSymlinks(ws)
		if err != nil {
			return "", &ConfError{File: c.Source, Line: c.workspaceLine, Msg: fmt.Sprintf("workspace-root = %s: %v", ws, errors.Unwrap(err))}
		}
		ws = resolved
		if !within(ws, l.Cwd) {
			return "", fmt.Errorf("the working directory %s is outside workspace-root %s (set in %s:%d); start claude from inside it", l.Cwd, ws, c.Source, c.workspaceLine)
		}
	} else {
		ws = gitTop(l.Cwd)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("workspace %s is not a directory", ws)
	}
	why := ""
	switch {
	case contains(notWorkspaces, ws):
		why = "it holds the system or other projects"
	case underAny(ws, systemDirs):
		why = "it is a system directory"
	case within(ws, l.Home):
		why = fmt.Sprintf("it is your home %s or contains it", l.Home)
	case strings.HasPrefix(ws, l.Home+"/."):
		why = "it is inside a hidden directory of your home, where shell, git and Claude settings live"
	}
	if why != "" {
		return "", fmt.Errorf("refusing to use %s as the workspace: %s; start claude inside a project directory, or set workspace-root in %s", ws, why, ConfPath)
	}
	return ws, nil
}

// gitTop returns the nearest ancestor of dir holding .git, or dir itself.
func gitTop(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == "/" {
			return dir
		}
	}
}

type mountKind int

const (
	pin      mountKind = iota // a directory bound onto itself so it cannot be renamed away
	readOnly                  // an existing path bound read-only
)

type mount struct {
	path string
	kind mountKind
	why  string
}

// missingName is a name the sandbox may not create, or write, in dir; for
// a protected path that is missing, path is that path.
type missingName struct{ dir, name, why, path string }

// protections turns holds into mounts and names. A path that exists is
// bound read-only, and its name refused (a program outside that replaces it
// dissolves the mount). A missing one's first missing component is
// refused: the warden keeps the sandbox from making it (ADR 0014). Every
// existing directory between a root and a held path is pinned: a mount
// point cannot be renamed, so the protection cannot be moved aside. Paths
// outside the roots (the workspace and the allow-write paths) are left
// alone: the sandbox cannot write there.
func protections(roots []string, holds []hold) ([]mount, []missingName, error) {
	kinds := map[string]mount{}
	var missing []missingName
	queue := append([]hold{}, holds...)
	for i := 0; i < len(queue); i++ {
		h := queue[i]
		root := rootOf(roots, h.path)
		if root == "" {
			// Outside the roots as written; a link may still lead inside.
			h.path = resolvePrefix(h.path)
			if root = rootOf(roots, h.path); root == "" {
				continue
			}
		}
		if h.path == root {
			continue
		}
		rel, _ := filepath.Rel(root, h.path)
		parts := strings.Split(rel, "/")
		cur := root
	walk:
		for j, part := range parts {
			parent := cur
			cur = filepath.Join(cur, part)
			last := j == len(parts)-1
			fi, err := os.Lstat(cur)
			switch {
			case errors.Is(err, fs.ErrNotExist) && last:
				missing = append(missing, missingName{parent, part, whyOr(h.why), h.path})
			case errors.Is(err, fs.ErrNotExist):
				// A directory on the way may be made (.claude/ for the
				// project's commands and skills); the path rule lets it be
				// made empty and refuses everything else there.
				missing = append(missing, missingName{why: whyOr(h.why), path: h.path})
			case err != nil:
				return nil, nil, fmt.Errorf("protected path %s: %v", cur, err)
			case fi.Mode()&fs.ModeSymlink != 0 && h.exact:
				return nil, nil, fmt.Errorf("protected path %s is a symlink, which the sandbox cannot hold read-only; replace it with the real directory or file", cur)
			case fi.Mode()&fs.ModeSymlink != 0:
				// The link's name is refused, so it cannot be replaced once
				// removed; what it leads to is held in its place.
				missing = append(missing, missingName{parent, part, h.why, ""})
				if target, err := os.Readlink(cur); err == nil && len(queue) < len(holds)+maxLinkHolds {
					if !filepath.IsAbs(target) {
						target = filepath.Join(parent, target)
					}
					h.path = filepath.Join(append([]string{target}, parts[j+1:]...)...)
					queue = append(queue, h)
				}
			case last && h.pin:
				if _, ok := kinds[cur]; !ok && fi.IsDir() {
					kinds[cur] = mount{cur, pin, whyPinGitDir}
				}
			case last || !fi.IsDir():
				kinds[cur] = mount{cur, readOnly, whyOr(h.why)}
				// The name is refused too: a program outside that replaces
				// the file (an editor's save, git's rename of config.lock)
				// dissolves the sandbox's mount on it.
				missing = append(missing, missingName{parent, part, whyOr(h.why), ""})
			default:
				if _, ok := kinds[cur]; !ok {
					kinds[cur] = mount{cur, pin, whyPin}
				}
				continue
			}
			break walk
		}
	}
	paths := make([]string, 0, len(kinds))
	for p := range kinds {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []mount
	for _, p := range paths {
		// Anything below a read-only path is already held.
		if !heldBy(out, p) {
			out = append(out, kinds[p])
		}
	}
	// Parents before children, so later mounts land on top.
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Count(out[i].path, "/") < strings.Count(out[j].path, "/")
	})
	return out, missing, nil
}

// pathRules are the protected paths missing at launch, but for those below
// a read-only mount, which holds them whenever they appear.
func pathRules(mounts []mount, missing []missingName) []PathRule {
	var out []PathRule
	seen := map[string]bool{}
	for _, m := range missing {
		if m.path == "" || seen[m.path] || heldBy(mounts, m.path) {
			continue
		}
		seen[m.path] = true
		out = append(out, PathRule{Path: m.path, Why: m.why})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// whyOr is a hold's reason, or the protected paths' own.
func whyOr(why string) string {
	if why != "" {
		return why
	}
	return "a protected path: a program outside the sandbox runs or obeys it"
}

const whyPinGitDir = "a git directory git outside enters, bound onto itself: a mount point cannot be renamed, so it cannot be moved aside and replaced"

const whyPin = "a directory on the way to a protected path, bound onto itself: a mount point cannot be renamed, so the protection cannot be moved aside"

// maxLinkHolds bounds the holds that links add, so links in a circle end.
const maxLinkHolds = 64

// heldBy reports whether p is at or below a read-only mount.
func heldBy(mounts []mount, p string) bool {
	for _, m := range mounts {
		if m.kind != pin && within(m.path, p) {
			return true
		}
	}
	return false
}

// rootOf returns the root that holds p, or "".
func rootOf(roots []string, p string) string {
	for _, r := range roots {
		if within(r, p) {
			return r
		}
	}
	return ""
}

// resolvePrefix resolves the links in the longest existing prefix of p.
func resolvePrefix(p string) string {
	rest := ""
	for d := p; ; d = filepath.Dir(d) {
		if resolved, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(resolved, rest)
		}
		if d == "/" || d == "." {
			return p
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(d, p) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
