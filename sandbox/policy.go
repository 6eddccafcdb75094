package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/egress"
)

// Fixed paths of the product.
const (
	RealBinary = "/usr/libexec/claude-sandbox/claude" // the real Claude Code, off PATH
	// InsideMarker exists only inside a sandbox: it is created on the
	// sandbox's private /run, and outside only root could create it.
	InsideMarker = "/run/claude-sandbox/inside"
	// OutsideSettings is Claude Code's managed settings for a Claude Code
	// started outside the sandbox: no hooks, MCP servers or helper commands
	// but the managed ones (ADR 0012). A managed drop-in applies to every
	// Claude Code on the machine, so the sandbox covers it with
	// InsideSettings, which sets nothing: sessions inside keep the user's
	// hooks and MCP servers.
	OutsideSettings = "/etc/claude-code/managed-settings.d/claude-sandbox-outside.json"
	InsideSettings  = "/usr/libexec/claude-sandbox/inside-settings.json"
)

// DefaultProtect are workspace paths that run code outside the sandbox later.
// A trailing slash marks a directory.
var DefaultProtect = []string{
	".devcontainer/",     // initializeCommand runs on the host, postCreate as root
	".devcontainer.json", // the same, at the other place the spec allows
	".git/hooks/",        // run by the editor's git integration
	".git/config",        // core.fsmonitor, hooksPath, filters
	".git/commondir",     // would point git at another config and hooks
	".git/modules/",      // submodules' own config and hooks
	".git/worktrees/",    // linked worktrees' commondir and config
	".vscode/",           // tasks.json, launch.json, settings that name executables
	".idea/",             // run configurations
	".envrc",             // direnv runs it in every shell that enters the workspace
	// A Claude Code started here outside the sandbox (an IDE's bundled
	// binary, an SDK app) reads these before any prompt: their env block
	// reaches its own process (the API address its login goes to, a cloud
	// provider's credential program), which no managed setting can switch
	// off; their hooks, MCP servers and helper commands run as well.
	".claude/settings.json",
	".claude/settings.local.json",
	".mcp.json",
}

// madeParents are missing directories on the way to a protected path that
// the launcher creates for real (writable, removed afterwards if still
// empty) instead of holding them by a read-only stub: Claude Code keeps a
// project's own commands, skills, agents and worktrees in .claude/, which
// a session must stay able to create.
var madeParents = map[string]bool{".claude": true}

// MaskedDirs are hidden behind an empty tmpfs when they exist: other users'
// homes, other projects, runtime sockets and secrets, shared temp files.
var MaskedDirs = []string{"/home", "/root", "/run", "/tmp", "/var/tmp", "/var/run", "/workspaces", "/mnt", "/media"}

// systemDirs may never be a workspace or allow-write path, nor contain one.
var systemDirs = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin", "/sys", "/usr", "/var/lib", "/var/run"}

// notWorkspaces are directories that hold more than one project or the
// system, so they can never be the workspace themselves.
var notWorkspaces = []string{"/", "/var", "/home", "/root", "/tmp", "/var/tmp", "/workspaces", "/mnt", "/media", "/opt", "/srv"}

// ClaudeReadOnly are the parts of ~/.claude a session could use to plant
// code for later sessions or other containers: user settings (hooks live
// there), hook scripts, plugins (which carry hooks and MCP servers), and
// an older installer's ~/.claude/local, whose `claude` a shell alias and
// other tools run outside. The launcher creates them if missing so they
// can be bound.
var ClaudeReadOnly = []string{".claude/settings.json", ".claude/hooks", ".claude/plugins", ".claude/local"}

// homeNeverWritable are home entries an allow-write line may not expose:
// they run code outside the sandbox or hold Claude's hooks.
var homeNeverWritable = []string{
	".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv", ".config",
	".ssh", ".gitconfig", ".local/bin", ".claude/settings.json", ".claude/hooks", ".claude/plugins", ".claude/local", ".claude/ide", ".cache/claude-sandbox",
}

// Launch holds the facts of one launch. Paths are absolute with symlinks
// resolved.
type Launch struct {
	User    string   // from the passwd database, never the environment
	Home    string   // from the passwd database
	Shell   string   // from the passwd database
	Cwd     string   // the kernel's idea of the working directory
	Environ []string // the caller's environment
	Args    []string // arguments for Claude Code
	// RealBinary is sandbox.RealBinary in every launch; tests use a stand-in.
	RealBinary string
	Masks      []string // the MaskedDirs that exist here, hidden behind an empty tmpfs
	Keep       []string // files under Masks that the system needs, bound back read-only
	Launcher   string   // the launcher's own binary, bound inside to run net-init
	// OutsideSettings is the managed lock-down for Claude Code started
	// outside, covered inside by InsideSettings; "" when there is none.
	OutsideSettings string
	InsideSettings  string // sandbox.InsideSettings in every launch; tests use a stand-in
	// AuthToken is the session token Claude gets in place of its login when
	// the launcher proxies the credential; "" when it does not.
	AuthToken string
	AuthAddr  string // the credential proxy's address in open mode
}

// Plan is everything needed to start the sandbox.
type Plan struct {
	Workspace string
	Args      []string // bwrap options, written to the --args fd (they carry the environment)
	Redacted  []string // Args with values copied from the caller shown as <passed>
	Command   []string // what bwrap runs, after "--" on its command line
	Stubs     []Stub   // missing protected paths the launcher creates so they can be bound read-only
	// CommandFiles are the files under ~/.claude that the user's settings
	// name as commands and that are missing: the launcher creates them
	// empty so they can be bound read-only.
	CommandFiles []string
	// Listen are the loopback addresses net-init opens inside the sandbox's
	// network namespace and hands to the launcher: the egress proxy, then
	// the credential proxy. Empty in open mode.
	Listen []string
	Egress *egress.Policy // what the egress proxy lets through; nil in open mode
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
	b := &argv{}
	b.add("--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try")
	b.add("--die-with-parent", "--cap-drop", "ALL", "--clearenv")
	b.add("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	// Kernel settings are checked against the file's owner, not capabilities:
	// a root session (uid 0, no capabilities) could otherwise set
	// kernel.core_pattern to a program the host runs as root. bwrap covers
	// sysrq-trigger, irq and bus, but not sys.
	b.add("--ro-bind", "/proc/sys", "/proc/sys")
	b.add("--tmpfs", "/run") // always: the inside marker lives there
	for _, d := range l.Masks {
		if d != "/run" {
			b.add("--tmpfs", d)
		}
	}
	for _, f := range l.Keep {
		b.add("--ro-bind", f, f)
	}
	b.add("--dir", filepath.Dir(InsideMarker), "--dir", InsideMarker)

	home := l.Home
	b.add("--tmpfs", home)
	b.add("--ro-bind", l.RealBinary, filepath.Join(home, ".local/bin/claude"))
	b.add("--bind", filepath.Join(home, ".claude"), filepath.Join(home, ".claude"))
	b.add("--bind", filepath.Join(home, ".claude.json"), filepath.Join(home, ".claude.json"))
	commands, err := ClaudeCommandFiles(home)
	if err != nil {
		return nil, err
	}
	readOnlyHome := append([]string{}, ClaudeReadOnly...)
	var missing []string
	for _, p := range commands {
		rel, _ := filepath.Rel(home, p)
		readOnlyHome = append(readOnlyHome, rel)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, p)
		}
	}
	for _, p := range readOnlyHome {
		// A link would defeat the read-only bind: the mount lands on its
		// target, and the link itself, in the writable ~/.claude, could be
		// replaced by a file of the session's. So would a link on the way
		// below ~/.claude.
		claudeDir := filepath.Join(home, ".claude")
		for dir := filepath.Join(home, p); dir != claudeDir && within(claudeDir, dir); dir = filepath.Dir(dir) {
			if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				rel, _ := filepath.Rel(home, dir)
				return nil, fmt.Errorf("~/%s is a symbolic link; the sandbox keeps it read-only, which it cannot do through a link (the session could replace the link); replace the link with a copy of its target: t=$(readlink -f %s) && rm %s && cp -r \"$t\" %s", rel, dir, dir, dir)
			}
		}
		b.add("--ro-bind", filepath.Join(home, p), filepath.Join(home, p))
	}
	// The IDE extension's lock files hold the port and token of a websocket
	// whose tools run outside the sandbox.
	b.add("--tmpfs", filepath.Join(home, ".claude/ide"))
	noForge := c.NoForge || s.NoForge
	for _, sh := range c.ShareHome {
		rel := strings.TrimSuffix(sh.Value, "/")
		if noForge && underAny(rel, forgeHome) {
			continue
		}
		p := filepath.Join(home, rel)
		b.add("--ro-bind-try", p, p)
	}

	protect := append([]string{}, DefaultProtect...)
	for _, p := range c.Protect {
		protect = append(protect, p.Value)
	}
	protect = append(protect, s.Protect...)
	derived, err := DerivedProtect(ws)
	if err != nil {
		return nil, err
	}
	protect = append(protect, derived...)
	for _, aw := range c.AllowWrite {
		p, err := checkAllowWrite(aw.Value, ws, home, protect, map[string]string{c.Source: "the conf", l.RealBinary: "the real Claude Code binary"})
		if err != nil {
			return nil, &ConfError{File: c.Source, Line: aw.Line, Msg: fmt.Sprintf("allow-write = %s %v", aw.Value, err)}
		}
		b.add("--bind", p, p)
	}

	b.add("--bind", ws, ws)
	mounts, err := protections(ws, protect)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Workspace: ws, CommandFiles: missing}
	for _, m := range mounts {
		switch m.kind {
		case pin:
			b.add("--bind", m.path, m.path)
		case madeDir:
			b.add("--bind", m.path, m.path)
			plan.Stubs = append(plan.Stubs, Stub{Path: m.path, Dir: true, Writable: true})
		case readOnly:
			b.add("--ro-bind", m.path, m.path)
		case stubDir, stubFile:
			b.add("--ro-bind", m.path, m.path)
			plan.Stubs = append(plan.Stubs, Stub{Path: m.path, Dir: m.kind == stubDir})
		}
	}

	if l.OutsideSettings != "" {
		// A regular file: Claude Code stops at a settings file that is a
		// device (/dev/null) with a dialog. Last, so that no bind lands on
		// top of it.
		if fi, err := os.Stat(l.InsideSettings); err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s, which covers %s inside the sandbox, is missing; run `sudo claude-sandbox install`", l.InsideSettings, l.OutsideSettings)
		}
		b.add("--ro-bind", l.InsideSettings, l.OutsideSettings)
	}
	b.add("--chdir", l.Cwd, "--seccomp", fmt.Sprint(SeccompFD), "--json-status-fd", fmt.Sprint(StatusFD))
	env := envFromCaller(c, noForge, l.Environ)
	if plan.Listen, err = network(b, c, l, env); err != nil {
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
		b.setenvShown(n, env[n].value, env[n].shown)
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, d := range c.AppendPath {
		path += ":" + d.Value
	}
	path += ":" + filepath.Join(home, ".local/bin")
	if venv, ok := lookup(l.Environ, "VIRTUAL_ENV"); ok && filepath.IsAbs(venv) && !strings.Contains(venv, ":") {
		path += ":" + filepath.Join(venv, "bin")
	}
	b.setenv("HOME", home)
	b.setenv("USER", l.User)
	b.setenv("LOGNAME", l.User)
	b.setenv("SHELL", l.Shell)
	b.setenv("PATH", path)
	b.setenv("IS_SANDBOX", "1")
	b.setenv("DISABLE_AUTOUPDATER", "1")

	plan.Args, plan.Redacted = b.args, b.redacted
	plan.Command = append([]string{filepath.Join(home, ".local/bin/claude"), "--no-chrome"}, ClaudeArgs(l.Args)...)
	if plan.Listen != nil {
		plan.Command = NetInitCommand(plan.Listen, plan.Command)
	}
	return plan, nil
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
func envFromCaller(c *Conf, noForge bool, environ []string) map[string]envValue {
	extra := map[string]bool{}
	for _, p := range c.PassEnv {
		extra[p.Value] = true
	}
	if noForge {
		for _, t := range ForgeTokens {
			delete(extra, t)
		}
	}
	env := map[string]envValue{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || neverPassed(name) != "" || !(passedByDefault(name) || extra[name]) {
			continue
		}
		env[name] = envValue{value, "<passed>"}
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

func checkAllowWrite(p, ws, home string, protect []string, product map[string]string) (string, error) {
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("cannot be used: %v", errors.Unwrap(err))
	}
	var why []string // every reason, the most basic first
	if resolved == "/" || contains(notWorkspaces, resolved) || underAny(resolved, systemDirs) {
		why = append(why, "is a system directory")
	}
	if within(resolved, home) {
		why = append(why, "is your home or contains it")
	}
	if within(resolved, ws) {
		why = append(why, "is the workspace or contains it")
	}
	for _, h := range homeNeverWritable {
		if hp := filepath.Join(home, h); within(resolved, hp) || within(hp, resolved) {
			why = append(why, fmt.Sprintf("exposes %s, which runs code outside the sandbox or holds Claude's hooks", hp))
		}
	}
	for _, prot := range protect {
		if pp := filepath.Join(ws, strings.TrimSuffix(prot, "/")); within(pp, resolved) || within(resolved, pp) {
			why = append(why, fmt.Sprintf("is or holds the protected %s", pp))
		}
	}
	files := make([]string, 0, len(product))
	for file := range product {
		files = append(files, file)
	}
	sort.Strings(files)
	for _, file := range files {
		if within(resolved, file) {
			why = append(why, fmt.Sprintf("holds %s, %s", file, product[file]))
		}
	}
	if len(why) == 0 {
		return resolved, nil
	}
	msg := "would defeat the sandbox: it " + why[0]
	if resolved != p {
		msg += fmt.Sprintf(" (it resolves to %s)", resolved)
	}
	return "", errors.New(msg)
}

// Stub is a protected path that is missing at launch. The launcher creates
// it (an empty directory, or for the few files a tool must be able to read,
// a file holding StubContent) before bwrap binds it read-only, so the name
// cannot be created inside, and removes it when the last session in the
// workspace ends (ADR 0005). A Writable stub is a directory on the way to
// one (madeParents): created and removed the same way, but bound writable.
type Stub struct {
	Path     string
	Dir      bool
	Writable bool
}

// StubContent is what a file stub holds, or "" where a directory stub
// serves. Git reads .git/commondir whenever it exists, so that stub is a
// file naming the git directory itself, which is what git assumes without
// one. Claude Code stops at a settings file it cannot read (a directory)
// with a dialog, so those stubs are files holding settings that set
// nothing.
func StubContent(path string) string {
	dir, base := filepath.Split(path)
	switch {
	case base == "commondir":
		return ".\n"
	case filepath.Base(dir) == ".claude" && (base == "settings.json" || base == "settings.local.json"):
		return "{}\n"
	}
	return ""
}

type mountKind int

const (
	pin      mountKind = iota // a directory bound onto itself so it cannot be renamed away
	readOnly                  // an existing path bound read-only
	stubDir                   // a missing path, held by an empty read-only directory
	stubFile                  // a missing file that tools read, held by a read-only file
	madeDir                   // a missing directory of madeParents, created and pinned
)

type mount struct {
	path string
	kind mountKind
}

// protections turns workspace-relative protected paths into mounts. A path
// that exists is bound read-only. A missing one is held by an empty read-only
// stub at its first missing component, so it cannot be created, unless that
// component is one of madeParents, which is made and pinned instead. Every
// existing directory between the workspace and a protected path is pinned: a
// mount point cannot be renamed, so the protection cannot be moved aside.
func protections(ws string, rels []string) ([]mount, error) {
	kinds := map[string]mountKind{}
	for _, rel := range rels {
		isDir := strings.HasSuffix(rel, "/")
		parts := strings.Split(strings.TrimSuffix(rel, "/"), "/")
		cur := ws
	walk:
		for i, part := range parts {
			cur = filepath.Join(cur, part)
			last := i == len(parts)-1
			fi, err := os.Lstat(cur)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				if rel, _ := filepath.Rel(ws, cur); !last && madeParents[rel] {
					kinds[cur] = madeDir
					continue
				}
				// A directory holds even a missing file's name: git shows
				// neither an empty directory as untracked nor lets it be
				// added, so no stub can end up in a commit.
				k := stubDir
				if last && !isDir && StubContent(cur) != "" {
					k = stubFile
				}
				kinds[cur] = k
			case err != nil:
				return nil, fmt.Errorf("protected path %s: %v", cur, err)
			case fi.Mode()&fs.ModeSymlink != 0:
				return nil, fmt.Errorf("protected path %s is a symlink, which the sandbox cannot hold read-only; replace it with the real directory or file", cur)
			case last || !fi.IsDir():
				kinds[cur] = readOnly
			default:
				if _, ok := kinds[cur]; !ok {
					kinds[cur] = pin
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
		// Anything below a read-only path or a stub is already held.
		covered := false
		for _, m := range out {
			if m.kind != pin && m.kind != madeDir && within(m.path, p) {
				covered = true
			}
		}
		if !covered {
			out = append(out, mount{p, kinds[p]})
		}
	}
	// Parents before children, so later mounts land on top.
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Count(out[i].path, "/") < strings.Count(out[j].path, "/")
	})
	return out, nil
}

type argv struct{ args, redacted []string }

func (b *argv) add(a ...string) {
	b.args = append(b.args, a...)
	b.redacted = append(b.redacted, a...)
}

func (b *argv) setenv(name, value string) { b.setenvShown(name, value, "") }

// setenvShown sets a variable that the redacted argv shows as shown, or as
// it is when shown is "".
func (b *argv) setenvShown(name, value, shown string) {
	b.args = append(b.args, "--setenv", name, value)
	if shown == "" {
		shown = value
	}
	b.redacted = append(b.redacted, "--setenv", name, shown)
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
