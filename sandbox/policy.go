package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
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
	// RealBinary is layout.RealBinary in every launch; tests use a stand-in.
	RealBinary string
	Masks      []string // the MaskedDirs that exist here, hidden behind an empty tmpfs
	Keep       []string // files under Masks that the system needs, bound back read-only
	Launcher   string   // the launcher's own binary, bound inside to run init
	// OutsideSettings is the managed lock-down for Claude Code started
	// outside, covered inside by InsideSettings; "" when there is none.
	OutsideSettings string
	InsideSettings  string // layout.InsideSettings in every launch; tests use a stand-in
	// AuthToken is the session token Claude gets in place of its login when
	// the launcher proxies the credential; "" when it does not.
	AuthToken string
	AuthAddr  string // the credential proxy's address in open mode
	// Background is set in a launch that reaches Claude Code's background
	// service (ADR 0026); nil in every other launch.
	Background *Background
	// InSandbox says the plan is recomputed inside the sandbox it
	// describes (verify): there the git store's mounts show the store, not
	// what the launch saw, so the planning reads nothing through them.
	InSandbox bool
}

// Background is what a launch of Claude Code's background sessions shares
// with the other sandboxes of the same user and workspace.
type Background struct {
	// SocketDir is the host directory every such sandbox sees at
	// DaemonSocketDir: the service's sockets.
	SocketDir string
	UID       int
	// Service says this sandbox is the background service's own, where
	// `claude daemon run` runs and the sessions it starts; otherwise it is a
	// client's (`claude --bg`, `claude agents`, ...).
	Service bool
}

// DaemonSocketDir is where Claude Code puts its background service's
// sockets for the user uid.
func DaemonSocketDir(uid int) string { return fmt.Sprintf("/tmp/cc-daemon-%d", uid) }

// OOMScoreAdj is the oom_score_adj of every process in the sandbox, which
// the launcher sets on the first and every other inherits: the kernel's OOM
// killer takes a process of the sandbox before any other.
const OOMScoreAdj = 1000

// BackgroundRoleVar names, inside, which sandbox of the background service
// this is: "service" or "client". The inside wrapper reads it; the caller
// cannot pass it (CLAUDE_SANDBOX_ names never enter).
const BackgroundRoleVar = "CLAUDE_SANDBOX_BACKGROUND"

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

// The file descriptors bwrap inherits from the launcher, numbered from 3
// in this order (the launcher passes them as exec.Cmd's ExtraFiles).
const (
	ArgsFD    = 3 + iota // bwrap's --args: the plan's options, NUL-separated
	SeccompFD            // bwrap's --seccomp: the sandbox's syscall filter
	StatusFD             // bwrap's --json-status-fd: the sandbox's first process
	// ControlFD is init's line to the launcher: the listening sockets and
	// the warden's listener travel out on it, the launcher's answer in.
	ControlFD
	BlockFD // bwrap's --block-fd: the launcher's go-ahead, once it confined the sandbox
	// InheritedFDs is how many descriptors bwrap inherits besides stdio.
	InheritedFDs = iota
)

// ClaudeCommand is the real binary at path with the caller's arguments:
// --chrome dropped and --no-chrome first, except for a lone --version (or
// -v), which Claude Code answers on its fast path only when it is the one
// argument, and `daemon`, which it takes as its subcommand only when first
// (behind --no-chrome, `daemon status` would be a prompt); neither starts
// a browser integration to keep out.
func ClaudeCommand(path string, args []string) []string {
	if VersionOnly(args) {
		return []string{path, args[0]}
	}
	if len(args) > 0 && args[0] == "daemon" {
		return append([]string{path}, args...)
	}
	return append([]string{path, "--no-chrome"}, ClaudeArgs(args)...)
}

// VersionOnly reports whether args ask Claude Code for its version alone.
func VersionOnly(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-v")
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

type mountKind int

const (
	pin       mountKind = iota // a directory bound onto itself so it cannot be renamed away
	readOnly                   // an existing path bound read-only
	storeBind                  // a directory of the git store bound in place of the path (ADR 0034)
	storeCopy                  // a copy of the file, in the git store, bound in its place (ADR 0034)
)

type mount struct {
	path   string
	kind   mountKind
	why    string
	source string // storeBind's directory
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
	pr := &protector{roots: roots, kinds: map[string]mount{}, queue: append([]hold{}, holds...), limit: len(holds) + maxLinkHolds}
	for i := 0; i < len(pr.queue); i++ {
		if err := pr.hold(pr.queue[i]); err != nil {
			return nil, nil, err
		}
	}
	return pr.mounts(), pr.missing, nil
}

// protector is one run of protections.
type protector struct {
	roots   []string
	kinds   map[string]mount // by path
	missing []missingName
	queue   []hold // the holds, and those links add
	limit   int    // how long the queue may grow
}

// hold walks from the root that holds h down to h.
func (pr *protector) hold(h hold) error {
	if h.store != "" && h.copy {
		pr.kinds[h.path] = mount{path: h.path, kind: storeCopy, why: h.why, source: h.store}
		return nil
	}
	if h.store != "" {
		return pr.storeHold(h)
	}
	root := rootOf(pr.roots, h.path)
	if root == "" {
		// Outside the roots as written; a link may still lead inside.
		h.path = resolvePrefix(h.path)
		if root = rootOf(pr.roots, h.path); root == "" {
			return nil
		}
	}
	if h.path == root {
		return nil
	}
	rel, _ := filepath.Rel(root, h.path)
	parts := strings.Split(rel, "/")
	parent := root
	for j, part := range parts {
		more, err := pr.step(h, parent, part, parts[j+1:])
		if err != nil || !more {
			return err
		}
		parent = filepath.Join(parent, part)
	}
	return nil
}

// step looks at parent/part on the way to h, rest being the way on below
// it, and reports whether the walk goes on.
func (pr *protector) step(h hold, parent, part string, rest []string) (bool, error) {
	cur := filepath.Join(parent, part)
	last := len(rest) == 0
	fi, err := os.Lstat(cur)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		pr.absent(h, parent, part, last)
	case err != nil:
		return false, fmt.Errorf("protected path %s: %w", cur, err)
	case fi.Mode()&fs.ModeSymlink != 0 && h.exact:
		return false, fmt.Errorf("protected path %s is a symlink, which the sandbox cannot hold read-only (%s); replace it with the real directory or file", cur, whyOr(h.why))
	case fi.Mode()&fs.ModeSymlink != 0:
		pr.link(h, parent, part, rest)
	case last && h.pin:
		if _, ok := pr.kinds[cur]; !ok && fi.IsDir() {
			pr.kinds[cur] = mount{path: cur, kind: pin, why: whyPinGitDir}
		}
	case last || !fi.IsDir():
		pr.kinds[cur] = mount{path: cur, kind: readOnly, why: whyOr(h.why)}
		// The name is refused too: a program outside that replaces the
		// file (an editor's save, git's rename of config.lock) dissolves
		// the sandbox's mount on it.
		pr.missing = append(pr.missing, missingName{parent, part, whyOr(h.why), ""})
	default:
		if _, ok := pr.kinds[cur]; !ok {
			pr.kinds[cur] = mount{path: cur, kind: pin, why: whyPin}
		}
		return true, nil
	}
	return false, nil
}

// storeHold binds h's store directory at h.path, with the directories on
// the way that exist pinned; the launcher makes the rest. Where a link or
// a file is on the way or at the path, a bind would land elsewhere, and
// where the user cannot make what is missing, the launch would fail: the
// path is held read-only instead, as any other (fail closed).
func (pr *protector) storeHold(h hold) error {
	root := rootOf(pr.roots, h.path)
	if root == "" || root == h.path {
		return nil
	}
	rel, _ := filepath.Rel(root, h.path)
	cur, last := root, root
	var pins []string
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			// The launcher makes the rest: the user must be able to.
			if unix.Access(last, unix.W_OK|unix.X_OK) != nil {
				pr.queue = append(pr.queue, hold{path: h.path, dir: true, why: h.why})
				return nil
			}
			break
		}
		if err != nil {
			return fmt.Errorf("protected path %s: %w", cur, err)
		}
		if !fi.IsDir() {
			pr.queue = append(pr.queue, hold{path: h.path, dir: true, why: h.why})
			return nil
		}
		if cur != h.path {
			pins = append(pins, cur)
		}
		last = cur
	}
	for _, p := range pins {
		if m, ok := pr.kinds[p]; !ok || m.kind == pin {
			pr.kinds[p] = mount{path: p, kind: pin, why: whyPin}
		}
	}
	pr.kinds[h.path] = mount{path: h.path, kind: storeBind, why: h.why, source: h.store}
	return nil
}

// absent refuses a missing h: at its first missing component, and as a
// path rule. A directory on the way may be made (.claude/ for the
// project's commands and skills); the path rule lets it be made empty and
// refuses everything else there.
func (pr *protector) absent(h hold, parent, part string, last bool) {
	if last {
		pr.missing = append(pr.missing, missingName{parent, part, whyOr(h.why), h.path})
		return
	}
	pr.missing = append(pr.missing, missingName{why: whyOr(h.why), path: h.path})
}

// link refuses the name of a link on the way to h, so it cannot be
// replaced once removed, and holds what it leads to in its place.
func (pr *protector) link(h hold, parent, part string, rest []string) {
	pr.missing = append(pr.missing, missingName{parent, part, h.why, ""})
	target, err := os.Readlink(filepath.Join(parent, part))
	if err != nil || len(pr.queue) >= pr.limit {
		return
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(parent, target)
	}
	h.path = filepath.Join(append([]string{target}, rest...)...)
	pr.queue = append(pr.queue, h)
}

// mounts are the mounts found, parents before children so that later
// mounts land on top, without those below a read-only path, which is
// held already.
func (pr *protector) mounts() []mount {
	paths := make([]string, 0, len(pr.kinds))
	for p := range pr.kinds {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []mount
	for _, p := range paths {
		if !heldBy(out, p) {
			out = append(out, pr.kinds[p])
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Count(out[i].path, "/") < strings.Count(out[j].path, "/")
	})
	return out
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
		if m.kind == readOnly && within(m.path, p) {
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
