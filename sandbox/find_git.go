package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/gitconfig"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"github.com/claude-sandbox/claude-sandbox/internal/plainfile"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
	"golang.org/x/sys/unix"
)

// Git outside the sandbox (the user's, the editor's, a shell prompt's) runs
// programs that the configuration of every repository it enters names, and
// it enters every repository of the workspace: the top-level one, nested
// clones, submodules, linked worktrees (ADR 0015). What the sandbox could
// write of that is held here: in every git directory the entries of
// gitDirEntries (lists.go), and around them the files their configuration
// (and the system's and the user's) names. What cannot be held by a mount,
// because it is missing, is a name rule (namerule.InDir) the warden
// enforces. This file finds the git directories; find_gitconfig.go reads
// what their configuration names.

// gitDir is a git directory git outside could use, with the working trees
// it is used from (relative hooksPath values and command paths are taken
// from there).
type gitDir struct {
	path      string
	worktrees []string
}

// gitHolds is what protectGit found to hold, and the names to refuse in
// every git directory whether or not they exist: an entry that exists is
// bound read-only, but git outside may remove it during the session (a
// rebase that ends removes rebase-merge/), which removes the sandbox's
// mount with it, and the name must stay closed then too.
type gitHolds struct {
	holds []hold
	names []missingName
	dirs  []namerule.GitDir // the git directories held, with their working trees
}

// gitScan collects the git directories and what to hold.
type gitScan struct {
	ws      string
	roots   []string // where the sandbox can write: the workspace and the allow-write paths
	home    string
	dirs    map[string]*gitDir
	order   []*gitDir
	holds   []hold
	entries []gitconfig.Entry // of the system and global configs, which apply to every repository
	// inSandbox: the scan runs inside the sandbox (Launch.InSandbox), where
	// a .git link into the git store leads to the store and the store's
	// mount points show its contents; the launch saw neither.
	inSandbox bool
	common    string  // the workspace repository's common git directory, once known
	refused   []error // commands that cannot be held (pythonDirs)
}

const (
	whyWorktreeStore   = "git directories of worktrees made during the workspace's sessions, seen only inside: git outside never enters a worktree made there (ADR 0034)"
	whyClaudeWorktrees = "the checkouts of Claude Code's worktrees (claude --worktree, EnterWorktree), kept in the workspace's git store and seen only inside (ADR 0034)"
	whyModuleStore     = "git directories of submodules initialised during the workspace's sessions, seen only inside: git outside never enters a submodule checked out there (ADR 0034)"
	whyConfigCopy      = "a copy of the repository's configuration, made at each launch, that only the sandbox reads and writes (git submodule init, git config): git outside reads the real one, which the sandbox cannot write (ADR 0034)"
	whyGitDir          = "what git outside reads in a git directory: configuration, hooks, other git directories, sequencer state, the fsmonitor socket it asks, remotes it pushes to"
	whyGitFile         = "a .git file or link points there: git outside would use a repository made there"
	whyCommon          = "a commondir points there: git outside would read config and hooks made there"
	whyIncluded        = "configuration git outside reads (an include)"
	whyHooks           = "hooks git outside runs (core.hooksPath)"
)

// protectGit finds every git directory that git outside could enter from
// the roots, given the entries the walk found there, and returns what to
// hold. home is the user's real home, whose git configuration (read
// outside the sandbox's view) applies to every repository; env may
// name more configuration files (only more protection follows from it).
func protectGit(ws string, roots []string, found []foundEntry, home string, env launchenv.Env, inSandbox bool) (*gitHolds, error) {
	s := &gitScan{ws: ws, roots: roots, home: home, dirs: map[string]*gitDir{}, inSandbox: inSandbox}
	s.common = s.workspaceCommonDir()
	s.above()
	for _, e := range found {
		if e.rule != ".git" {
			continue
		}
		if err := s.entry(e); err != nil {
			return nil, err
		}
	}
	if err := s.readConfigs(env); err != nil {
		return nil, err
	}
	out := &gitHolds{}
	common := s.common
	for _, g := range s.order {
		if !s.writable(g.path) {
			continue
		}
		s.holds = append(s.holds, hold{path: g.path, pin: true, why: whyGitDir})
		out.dirs = append(out.dirs, namerule.GitDir{Dir: g.path, Tops: g.worktrees})
		for _, e := range gitDirEntries {
			out.names = append(out.names, missingName{dir: g.path, name: e.name, why: whyGitDir})
			if g.path == common && s.storeHolds(common, e.name) {
				continue
			}
			s.holds = append(s.holds, hold{path: filepath.Join(g.path, e.name), dir: e.dir, why: whyGitDir})
		}
	}
	out.holds = s.holds
	return out, nil
}

// workspaceCommonDir is the git directory of the repository the workspace
// is a working tree of, where git makes its linked worktrees' git
// directories (the common directory of the workspace's own), if the
// sandbox can write it; "" for none. A workspace whose .git is a link has
// none: a repository made inside keeps all of its git directory in the
// store already, and any other link is held as it is.
func (s *gitScan) workspaceCommonDir() string {
	dot := filepath.Join(s.ws, ".git")
	fi, err := os.Lstat(dot)
	if err != nil {
		return ""
	}
	gd := dot
	switch {
	case fi.IsDir():
	case fi.Mode().IsRegular():
		t, err := gitdirFile(dot)
		if err != nil {
			return ""
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(s.ws, t)
		}
		gd = filepath.Clean(t)
	default:
		return ""
	}
	if b, err := readFile(filepath.Join(gd, "commondir")); err == nil && len(b) > 0 {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gd, c)
		}
		gd = filepath.Clean(c)
	}
	if resolved, err := filepath.EvalSymlinks(gd); err != nil || resolved != gd || !s.writable(gd) {
		return ""
	}
	return gd
}

// storeHolds holds, for the entry name of the workspace repository's
// common git directory, what the git store gives the sandbox in its place
// (ADR 0034), and reports whether it did: the worktrees' and the
// submodules' git directories, and a copy of the configuration that only
// the sandbox reads and writes.
func (s *gitScan) storeHolds(common, name string) bool {
	switch name {
	case "worktrees":
		s.worktreeStores(common)
	case "modules":
		modules := filepath.Join(common, "modules")
		s.holds = append(s.holds, hold{path: modules, dir: true, why: whyModuleStore, store: StateDir(s.home, s.ws, "modules")})
		for _, e := range s.boundBack(modules) {
			s.holds = append(s.holds, hold{path: filepath.Join(modules, e), dir: true, why: whyGitDir})
		}
	case "config":
		config := filepath.Join(common, "config")
		if fi, err := os.Lstat(config); err != nil || !fi.Mode().IsRegular() {
			return false // held as any other: a link's target, or refused while missing
		}
		s.holds = append(s.holds, hold{path: config, why: whyConfigCopy, store: StateDir(s.home, s.ws, "repo-config"), copy: true})
	default:
		return false
	}
	return true
}

// claudeWorktreesStore is the git store's directory of Claude Code's
// checkouts.
const claudeWorktreesStore = "claude-worktrees"

// worktreeStores holds where worktrees made inside go (ADR 0034): the
// common git directory's worktrees/ and the workspace's
// .claude/worktrees/, where Claude Code checks its worktrees out, are
// directories of the workspace's git store inside. What is there already,
// made outside, is bound back on top: the worktrees' git directories
// read-only (as the whole worktrees/ was), the checkouts as they are.
func (s *gitScan) worktreeStores(common string) {
	admin := filepath.Join(common, "worktrees")
	checkouts := filepath.Join(s.ws, ".claude", "worktrees")
	s.holds = append(s.holds, hold{path: admin, dir: true, why: whyWorktreeStore, store: StateDir(s.home, s.ws, "worktrees")},
		hold{path: checkouts, dir: true, why: whyClaudeWorktrees, store: StateDir(s.home, s.ws, claudeWorktreesStore)})
	for _, e := range s.boundBack(admin) {
		s.holds = append(s.holds, hold{path: filepath.Join(admin, e), dir: true, why: whyGitDir})
	}
	for _, e := range s.boundBack(checkouts) {
		s.holds = append(s.holds, hold{path: filepath.Join(checkouts, e), pin: true, why: whyClaudeWorktrees})
	}
}

// boundBack are the directories in dir, a mount point of the git store,
// that were made outside and are bound back on the store: outside, what
// dir holds; inside the sandbox, where dir shows the store, the entries
// that are mounts of their own.
func (s *gitScan) boundBack(dir string) []string {
	names := dirEntries(dir)
	if !s.inSandbox {
		return names
	}
	var out []string
	for _, n := range names {
		var stx unix.Statx_t
		if unix.Statx(unix.AT_FDCWD, filepath.Join(dir, n), unix.AT_SYMLINK_NOFOLLOW, 0, &stx) == nil &&
			stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0 {
			out = append(out, n)
		}
	}
	return out
}

// outsideStore drops what the walk found below the workspace's
// .claude/worktrees/, which inside the sandbox is the git store's.
func outsideStore(ws string, found []foundEntry) []foundEntry {
	store := filepath.Join(ws, ".claude", "worktrees")
	var out []foundEntry
	for _, e := range found {
		if !subtree.Of(store).Contains(e.path) {
			out = append(out, e)
		}
	}
	return out
}

// dirEntries are the names of the directories in dir (none if it is
// missing or not a directory); links are not followed.
func dirEntries(dir string) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if de.IsDir() {
			out = append(out, de.Name())
		}
	}
	return out
}

// above adds the repository the workspace lies in, when its .git is above
// the workspace (workspace-root names a subdirectory of a repository): its
// configuration can name files in the workspace.
func (s *gitScan) above() {
	if _, err := os.Lstat(filepath.Join(s.ws, ".git")); err == nil {
		return
	}
	for d := filepath.Dir(s.ws); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			s.addTarget(filepath.Join(d, ".git"), d, whyGitFile)
			return
		}
		if d == "/" {
			return
		}
	}
}

// entry adds what a .git found in the roots leads to: a git directory, the
// target of a "gitdir:" file (which is held itself, so it cannot be
// repointed) or of a link. Only the workspace's own .git file must parse:
// git cannot use another that does not either.
func (s *gitScan) entry(e foundEntry) error {
	worktree := filepath.Dir(e.path)
	var target string
	switch e.kind {
	case unix.DT_DIR:
		s.add(e.path, worktree)
		return nil
	case unix.DT_REG:
		s.holds = append(s.holds, hold{path: e.path, why: whyGitFile})
		t, err := gitdirFile(e.path)
		if err != nil && e.path == filepath.Join(s.ws, ".git") {
			return err
		}
		target = t
	case unix.DT_LNK:
		if _, _, ok := GitStoreEntry(e.path); ok && s.inSandbox {
			return nil // outside it leads nowhere
		}
		target, _ = os.Readlink(e.path)
	}
	if target == "" {
		return nil
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(worktree, target)
	}
	s.addTarget(target, worktree, whyGitFile)
	return nil
}

func (s *gitScan) writable(p string) bool { return underAny(p, s.roots) }

// addTarget registers the git directory a .git file, a link or a commondir
// points to. A missing one in a writable place must not appear.
func (s *gitScan) addTarget(target, worktree, why string) {
	target = filepath.Clean(target)
	resolved, err := filepath.EvalSymlinks(target)
	if err != nil {
		if s.writable(target) {
			s.holds = append(s.holds, hold{path: target, dir: true, why: why})
		}
		return
	}
	if fi, err := os.Stat(resolved); err == nil && fi.IsDir() {
		s.add(resolved, worktree)
	}
}

// add registers a git directory used from worktree ("" if unknown), and
// the git directories it leads to: its commondir, its submodules' and its
// linked worktrees'.
func (s *gitScan) add(path, worktree string) {
	if g, ok := s.dirs[path]; ok {
		g.addWorktree(worktree)
		return
	}
	g := &gitDir{path: path}
	g.addWorktree(worktree)
	s.dirs[path] = g
	s.order = append(s.order, g)

	if b, err := readFile(filepath.Join(path, "commondir")); err == nil && len(b) > 0 {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(path, common)
		}
		s.addTarget(common, worktree, whyCommon)
	}
	var subs []string
	if !(s.inSandbox && path == s.common) {
		subs = submoduleGitDirs(filepath.Join(path, "modules")) // inside, the store's
	}
	for _, sub := range subs {
		s.add(sub, "") // its working tree comes from its core.worktree, or from its .git file
	}
	var linked []os.DirEntry
	if !(s.inSandbox && path == s.common) {
		linked, _ = os.ReadDir(filepath.Join(path, "worktrees")) // inside, the store's
	}
	for _, l := range linked {
		dir := filepath.Join(path, "worktrees", l.Name())
		b, err := readFile(filepath.Join(dir, "gitdir"))
		if err != nil || len(b) == 0 {
			continue
		}
		dotGit := strings.TrimSpace(string(b)) // the worktree's .git file
		if !filepath.IsAbs(dotGit) {
			dotGit = filepath.Join(dir, dotGit) // worktree.useRelativePaths
		}
		s.add(dir, filepath.Dir(filepath.Clean(dotGit)))
	}
}

func (g *gitDir) addWorktree(w string) {
	if w != "" && !contains(g.worktrees, w) {
		g.worktrees = append(g.worktrees, w)
	}
}

// submoduleGitDirs returns the git directories under a modules directory.
// A submodule's name may hold slashes, so a directory that is not a git
// directory is looked into; one that is, is not (its own modules/ is
// found when it is added).
func submoduleGitDirs(modules string) []string {
	var out []string
	for _, name := range dirEntries(modules) {
		d := filepath.Join(modules, name)
		if fi, err := os.Lstat(filepath.Join(d, "HEAD")); err == nil && fi.Mode().IsRegular() {
			out = append(out, d)
		} else {
			out = append(out, submoduleGitDirs(d)...)
		}
	}
	return out
}

// gitdirFile reads the "gitdir: PATH" line of a .git file.
func gitdirFile(path string) (string, error) {
	b, err := plainfile.Read(path, workspaceFile)
	if err != nil {
		return "", readError(path, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok || strings.TrimSpace(target) == "" {
		return "", fmt.Errorf("%s is a file but not a \"gitdir: PATH\" link; the sandbox cannot tell which git directory to protect", path)
	}
	return strings.TrimSpace(target), nil
}
