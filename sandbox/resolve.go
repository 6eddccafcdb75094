package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
)

// Resolved is what a plan is assembled from besides the conf and the
// launch: what Resolve found on the file system and in the launching
// environment. Assemble reads it and nothing else that can change.
type Resolved struct {
	workspace    string
	workspaceWhy string   // how the workspace was chosen
	commands     []string // files under ~/.claude that the user's settings name as commands
	missing      []string // of those, the ones missing, which the launcher creates
	writes       []write  // allow-write and allow-write-executable lines, resolved
	held         []mount  // the protections: directories pinned, paths read-only
	nameRules    []namerule.InDir
	pathRules    []namerule.Path
	gitDirs      []namerule.GitDir
	credentials  bool                // Claude Code's login file exists, and the launch covers it
	egress       *hostaddr.Allowlist // in allowlist mode
	made         Made                // what the launch makes outside for the mounts
	gitConfig    *HomeGitConfig      // the home's git configuration; nil when share-home shares the user's
	forgeBundle  []byte              // the certificate authorities the sandbox trusts with forge lines; nil without
}

// Made is what the launch makes outside before bwrap starts.
func (r *Resolved) Made() Made { return r.made }

// Workspace is the sandbox's writable root.
func (r *Resolved) Workspace() string { return r.workspace }

// A write is an allow-write or allow-write-executable line and the path it
// binds.
type write struct {
	path, key string
	line      Line
}

// Resolve checks the conf against this launch and reads what the plan
// needs of the file system: the workspace, the links and files below
// ~/.claude, what the dev container's files and every git repository's
// configuration name, the allow-write paths, which protected paths exist.
// Every refusal it finds is an error naming what to change; when there is
// more than one, they come as Refusals, in the order they were found.
func Resolve(c *Conf, s SessionEnv, l Launch) (*Resolved, error) {
	if l.Home == "/" || !filepath.IsAbs(l.Home) || underAny(l.Home, systemDirs) {
		return nil, fmt.Errorf("user %s has home %q, which cannot be replaced by a private home; give the user a real home directory", l.User, l.Home)
	}
	r := &Resolved{}
	var err error
	if r.workspace, r.workspaceWhy, err = resolveWorkspace(c, l); err != nil {
		return nil, err
	}
	var refused Refusals
	refused.add(CheckCredentialMode(c, l.Env))
	refused.add(r.claudeCommands(l.Home))
	protect, err := protectedPaths(c, s, r.workspace, l.Home)
	refused.add(err)
	roots := r.allowWrites(c, l, protect, &refused)
	refused.add(r.protections(roots, protect, l))
	r.gitConfig, err = homeGitConfig(c, l)
	refused.add(err)
	r.forgeBundle, err = resolveForge(c, l)
	refused.add(err)
	refused.add(checkInsideSettings(l))
	refused.add(r.credentialsFile(l))
	if c.NetworkMode() == NetworkAllowlist {
		r.egress, err = EgressPolicy(c, l.Env, l.AuthToken != "")
		refused.add(err)
	}
	r.made = r.outsideParts(c, l.Home)
	return r, refused.err()
}

// outsideParts are what the mounts of the plan need outside: the
// directories only sandboxes see, in the order the plan binds them (the
// git store, Claude Code's own state, the sandbox caches, the store's
// parts bound on the workspace repository), the store's mount points in
// the workspace and in the store, its copies, and the missing command
// files.
func (r *Resolved) outsideParts(c *Conf, home string) Made {
	m := Made{OwnDirs: []string{StateDir(home, r.workspace, "git")}, CommandFiles: r.missing}
	for _, h := range claudeOwnState {
		m.OwnDirs = append(m.OwnDirs, StateDir(home, r.workspace, h.rel))
	}
	for _, sc := range c.SandboxCache {
		m.OwnDirs = append(m.OwnDirs, CacheDir(home, r.workspace, sc.Value))
	}
	stores := map[string]string{} // the store's binds: where, from what
	for _, h := range r.held {
		if src, ok := stores[filepath.Dir(h.path)]; ok {
			// Bound back on the store: bwrap makes its mount point in the
			// store's directory, where a session could have left a link.
			m.StorePoints = append(m.StorePoints, filepath.Join(src, filepath.Base(h.path)))
		}
		switch h.kind {
		case storeBind:
			stores[h.path] = h.source
			m.OwnDirs = append(m.OwnDirs, h.source)
			m.MountPoints = append(m.MountPoints, h.path)
		case storeCopy:
			m.OwnDirs = append(m.OwnDirs, filepath.Dir(h.source))
			m.Copies = append(m.Copies, FileCopy{From: h.path, To: h.source}, FileCopy{From: h.path, To: h.source + launchCopy})
		}
	}
	return m
}

// Refusals are every reason a launch is refused, in the order found.
type Refusals []error

func (r Refusals) Error() string {
	lines := make([]string, len(r))
	for i, err := range r {
		lines[i] = err.Error()
	}
	return strings.Join(lines, "\n")
}

func (r Refusals) Unwrap() []error { return r }

// add keeps err unless it is nil or said already.
func (r *Refusals) add(err error) {
	if err == nil {
		return
	}
	for _, e := range *r {
		if e.Error() == err.Error() {
			return
		}
	}
	*r = append(*r, err)
}

// err is nil, the one refusal, or all of them.
func (r Refusals) err() error {
	switch len(r) {
	case 0:
		return nil
	case 1:
		return r[0]
	}
	return r
}

// resolveWorkspace picks the writable root: the conf's workspace-root,
// else the git top-level of the working directory, else the working
// directory; and says which.
func resolveWorkspace(c *Conf, l Launch) (ws, why string, err error) {
	switch ws = c.WorkspaceRoot; {
	case ws != "":
		resolved, err := filepath.EvalSymlinks(ws)
		if err != nil {
			return "", "", &ConfError{File: c.Source, Line: c.workspaceLine, Msg: fmt.Sprintf("workspace-root = %s: %v", ws, errors.Unwrap(err))}
		}
		ws, why = resolved, fmt.Sprintf("workspace-root in %s:%d", c.Source, c.workspaceLine)
		if !subtree.Of(ws).Contains(l.Cwd) {
			return "", "", fmt.Errorf("the working directory %s is outside workspace-root %s (set in %s:%d); start claude from inside it", l.Cwd, ws, c.Source, c.workspaceLine)
		}
	default:
		ws, why = gitTop(l.Cwd)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("workspace %s is not a directory", ws)
	}
	if not := notWorkspace(ws, l.Home); not != "" {
		return "", "", fmt.Errorf("refusing to use %s as the workspace: %s; start claude inside a project directory, or set workspace-root in %s", ws, not, layout.Conf)
	}
	return ws, why, nil
}

// notWorkspace says why ws can never be the workspace, or "".
func notWorkspace(ws, home string) string {
	switch {
	case contains(notWorkspaces, ws):
		return "it holds the system or other projects"
	case underAny(ws, systemDirs):
		return "it is a system directory"
	case subtree.Of(ws).Contains(home):
		return fmt.Sprintf("it is your home %s or contains it", home)
	case strings.HasPrefix(ws, home+"/."):
		return "it is inside a hidden directory of your home, where shell, git and Claude settings live"
	}
	return ""
}

// gitTop returns the nearest ancestor of dir holding .git, or dir itself,
// and says which.
func gitTop(dir string) (string, string) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, "the top of the git repository the working directory is in"
		}
		if d == "/" {
			return dir, "the working directory, which is in no git repository"
		}
	}
}

// claudeCommands finds the files the user's settings name as commands,
// and refuses a link where the plan binds read-only below ~/.claude.
func (r *Resolved) claudeCommands(home string) error {
	commands, err := ClaudeCommandFiles(home)
	if err != nil {
		return err
	}
	r.commands = commands
	for _, p := range commands {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			r.missing = append(r.missing, p)
		}
	}
	var refused Refusals
	for _, p := range readOnlyHome(home, commands) {
		refused.add(linkBelowClaude(home, p))
	}
	for _, p := range claudeOwnState {
		if fi, err := os.Lstat(filepath.Join(home, p.rel)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			refused.add(fmt.Errorf("~/%s is a symbolic link; the sandbox binds the workspace's own directory there (%s), and a bind through a link lands on its target; remove the link: rm %s", p.rel, p.why, filepath.Join(home, p.rel)))
		}
	}
	return refused.err()
}

// linkBelowClaude refuses a link at p or on the way to it below ~/.claude,
// with the reason the plan gives p. A link would defeat the read-only
// bind: the mount lands on its target, and the link itself, in the
// writable ~/.claude, could be replaced by a file of the session's.
func linkBelowClaude(home string, p homePath) error {
	claudeDir := filepath.Join(home, ".claude")
	for dir := filepath.Join(home, p.rel); dir != claudeDir && subtree.Of(claudeDir).Contains(dir); dir = filepath.Dir(dir) {
		if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(home, dir)
			held := "it"
			if rel != p.rel {
				held = "~/" + p.rel
			}
			return fmt.Errorf("~/%s is a symbolic link; the sandbox keeps %s read-only (%s), which it cannot do through a link (the session could replace the link); replace the link with a copy of its target: t=$(readlink -f %s) && rm %s && cp -r \"$t\" %s", rel, held, p.why, dir, dir, dir)
		}
	}
	return nil
}

// protectedPaths are the workspace's protected paths: the defaults, the
// conf's and the session's, and those the dev container's files name.
func protectedPaths(c *Conf, s SessionEnv, ws, home string) ([]protectedPath, error) {
	protect := append([]protectedPath{}, defaultProtect...)
	for _, p := range c.Protect {
		protect = append(protect, protectedPath{p.Value, fmt.Sprintf("protect = %s in %s:%d", p.Value, c.Source, p.Line)})
	}
	for _, p := range s.Protect {
		protect = append(protect, protectedPath{p, "CLAUDE_SANDBOX_PROTECT of the launching environment"})
	}
	derived, err := DerivedProtect(ws)
	for _, p := range derived {
		protect = append(protect, protectedPath{p, "named by the dev container's configuration: a rebuild runs it"})
	}
	commands, cerr := ProjectCommandFiles(ws)
	for _, p := range commands {
		protect = append(protect, protectedPath{p, whyProjectCommand})
	}
	users, uerr := UserCommandFilesInWorkspace(ws, home)
	for _, p := range users {
		protect = append(protect, protectedPath{p, whyUserCommand})
	}
	return protect, errors.Join(err, cerr, uerr)
}

const whyProjectCommand = "the project's Claude settings name it as a command: a Claude Code started here outside the sandbox runs it"

const whyUserCommand = "the user's Claude settings name it as a command run in the project: a Claude Code started here outside the sandbox runs it"

// allowWrites checks each allow-write and allow-write-executable line and
// returns where the sandbox can write: the workspace and the paths
// accepted.
func (r *Resolved) allowWrites(c *Conf, l Launch, protect []protectedPath, refused *Refusals) []string {
	w := &writeCheck{ws: r.workspace, home: l.Home, passwdHomes: l.Homes, protect: protect, caches: c.SandboxCache,
		product: map[string]string{c.Source: "the conf", l.RealBinary: "the real Claude Code binary"}}
	for _, d := range c.AppendPath {
		if resolved, err := filepath.EvalSymlinks(d.Value); err == nil {
			w.path = append(w.path, resolved)
		}
		w.path = append(w.path, d.Value)
	}
	roots := []string{r.workspace}
	for _, k := range []struct {
		key        string
		lines      []Line
		executable bool
	}{{"allow-write", c.AllowWrite, false}, {"allow-write-executable", c.AllowWriteExecutable, true}} {
		for _, aw := range k.lines {
			p, err := w.check(aw.Value, k.executable)
			if err != nil {
				refused.add(&ConfError{File: c.Source, Line: aw.Line, Msg: fmt.Sprintf("%s = %s %v", k.key, aw.Value, err)})
				continue
			}
			r.writes = append(r.writes, write{p, k.key, aw})
			roots = append(roots, p)
		}
	}
	return roots
}

// protections finds what to hold in the roots: the protected paths, what
// every git repository there, and git's configuration, name, the
// configuration of every other version-control system's repository, and
// the files that pick a toolchain's program.
func (r *Resolved) protections(roots []string, protect []protectedPath, l Launch) error {
	holds := relHolds(r.workspace, protect)
	var refused Refusals
	found, err := findEntries(roots)
	if err != nil {
		refused.add(err)
		return refused.err()
	}
	holds = append(holds, vcsHolds(found)...)
	holds = append(holds, selectorHolds(found)...)
	if l.InSandbox {
		found = outsideStore(r.workspace, found)
	}
	git, err := protectGit(r.workspace, roots, found, l.Home, l.Env, l.InSandbox)
	refused.add(err)
	if err == nil {
		holds = append(holds, git.holds...)
	}
	held, missing, err := protections(roots, holds)
	if err != nil {
		refused.add(err)
		return refused.err()
	}
	names := missing
	if git != nil {
		names = append(names, git.names...)
		r.gitDirs = git.dirs
	}
	r.held, r.nameRules, r.pathRules = held, nameRules(held, names), pathRules(held, missing)
	return refused.err()
}

// checkInsideSettings refuses a launch whose managed lock-down for Claude
// Code outside cannot be covered: Claude Code stops at a settings file
// that is a device (/dev/null) with a dialog, so the cover is a regular
// file.
func checkInsideSettings(l Launch) error {
	if l.OutsideSettings == "" {
		return nil
	}
	if fi, err := os.Stat(l.InsideSettings); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s, which covers %s inside the sandbox, is missing; run `sudo claude-sandbox install`", l.InsideSettings, l.OutsideSettings)
	}
	return nil
}

// credentialsFile looks at Claude Code's login file when the launcher
// keeps the login outside: one that exists is covered, a link refused.
func (r *Resolved) credentialsFile(l Launch) error {
	if l.AuthToken == "" {
		return nil
	}
	cred := filepath.Join(l.Home, layout.CredentialsFile)
	if isLink(cred) {
		return fmt.Errorf("%s is a symbolic link; the sandbox hides the login, which it cannot do through a link; replace the link with a copy of its target", cred)
	}
	r.credentials = exists(cred)
	return nil
}
