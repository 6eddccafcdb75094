package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/gitconfig"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

// Git outside the sandbox (the user's, the editor's, a shell prompt's) runs
// programs that the configuration of every repository it enters names, and
// it enters every repository of the workspace: the top-level one, nested
// clones, submodules, linked worktrees (ADR 0015). What the sandbox could
// write of that is held here: in every git directory the entries of
// gitDirEntries (lists.go), and around them the files their configuration (and the system's and the
// user's) names. What cannot be held by a mount, because it is missing, is
// a name rule (namerule.InDir) the warden enforces.

// A hold is a path to keep read-only. One that exists is bound read-only
// and the directories on its way pinned; a missing one's first missing
// component is refused to the sandbox by a name rule, and so is the name of
// one that exists (a program outside that replaces it dissolves the
// mount).
type hold struct {
	path string // absolute
	dir  bool   // a directory is expected
	// exact refuses a link anywhere on the way (a path the admin or the
	// policy names); without it a link's name is refused and what it leads
	// to held (a path git configuration names).
	exact bool
	pin   bool   // an existing directory only pinned, not made read-only (a name rule's directory)
	why   string // the name rule's reason
	// store, when set, is a directory of the workspace's git store bound
	// at path instead (ADR 0034): what the sandbox makes there is seen
	// only inside. With copy, it is a file the launcher copies path to
	// before each launch.
	store string
	copy  bool
}

// A protectedPath is a workspace-relative path kept read-only (a trailing
// slash marks a directory), and why.
type protectedPath struct{ path, why string }

// relHolds turns workspace-relative protected paths into holds.
func relHolds(ws string, paths []protectedPath) []hold {
	out := make([]hold, 0, len(paths))
	for _, p := range paths {
		out = append(out, hold{path: filepath.Join(ws, p.path), dir: strings.HasSuffix(p.path, "/"), exact: true, why: p.why})
	}
	return out
}

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
		if !within(store, e.path) {
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

// readConfigs reads the system and global configuration and every git
// directory's, with their includes, and holds what they name: the
// included files, the hooks directories, the files their commands run.
func (s *gitScan) readConfigs(env launchenv.Env) error {
	for _, f := range sharedConfigs(env, s.home) {
		entries, err := s.load(f, true)
		if err != nil {
			return err
		}
		s.entries = append(s.entries, entries...)
	}
	own, err := s.ownConfigs()
	if err != nil {
		return err
	}
	var all []string // every working tree, for the system's and user's values
	for _, g := range s.order {
		all = append(all, g.bases()...)
	}
	for _, e := range s.entries {
		s.named(e, all)
	}
	for _, g := range s.order {
		for _, e := range own[g] {
			s.named(e, g.bases())
		}
	}
	return errors.Join(s.refused...)
}

// sharedConfigs are the system's and the user's configuration files, which
// apply to every repository, in git's order.
func sharedConfigs(env launchenv.Env, home string) []string {
	var shared []string
	if p, ok := env.Lookup("GIT_CONFIG_SYSTEM"); ok && filepath.IsAbs(p) {
		shared = append(shared, p)
	}
	shared = append(shared, "/etc/gitconfig")
	if p, ok := env.Lookup("GIT_CONFIG_GLOBAL"); ok && filepath.IsAbs(p) {
		shared = append(shared, p)
	}
	if x, ok := env.Lookup("XDG_CONFIG_HOME"); ok && filepath.IsAbs(x) {
		shared = append(shared, filepath.Join(x, "git/config"))
	}
	return append(shared, filepath.Join(home, ".config/git/config"), filepath.Join(home, ".gitconfig"))
}

// ownConfigs reads every repository's own configuration, and takes its
// core.worktree first, since the other values are resolved against the
// working trees.
func (s *gitScan) ownConfigs() (map[*gitDir][]gitconfig.Entry, error) {
	own := map[*gitDir][]gitconfig.Entry{}
	for _, g := range s.order {
		for _, name := range []string{"config", "config.worktree"} {
			entries, err := s.load(filepath.Join(g.path, name), false)
			if err != nil {
				return nil, err
			}
			own[g] = append(own[g], entries...)
			for _, e := range entries {
				g.addWorktreeOf(e)
			}
		}
	}
	return own, nil
}

// addWorktreeOf adds the working tree a core.worktree entry names.
func (g *gitDir) addWorktreeOf(e gitconfig.Entry) {
	if e.Kind() != gitconfig.Worktree || e.NoValue || e.Value == "" {
		return
	}
	w := e.Value
	if !filepath.IsAbs(w) {
		w = filepath.Join(g.path, w)
	}
	g.addWorktree(filepath.Clean(w))
}

// bases are the directories a repository's relative values are taken
// from: its working trees, or the git directory itself when it has none
// (a bare repository, whose hooks run there).
func (g *gitDir) bases() []string {
	if len(g.worktrees) == 0 {
		return []string{g.path}
	}
	return g.worktrees
}

// load reads a config file and its includes, and holds the included
// files, and the file itself when self is set (a git directory's own are
// held with the directory's entries). Files outside the roots are dropped
// later: the sandbox cannot write them anyway.
func (s *gitScan) load(path string, self bool) ([]gitconfig.Entry, error) {
	from := path
	if s.inSandbox && path == filepath.Join(s.common, "config") && exists(layout.InsideRepoConfig) {
		// Inside, the repository's own name leads to the sandbox's copy;
		// the launch read the real one, which the launcher keeps here.
		from = layout.InsideRepoConfig
	}
	entries, files, err := gitconfig.LoadFrom(path, from, s.home)
	if err != nil {
		return nil, err
	}
	for i, f := range files {
		if i > 0 || self {
			s.holds = append(s.holds, hold{path: f.Path, why: whyIncluded})
		}
	}
	return entries, nil
}

// named holds what one configuration variable names: a hooks directory, a
// template directory, or the files in a command's words. Relative values
// are taken from each of bases.
func (s *gitScan) named(e gitconfig.Entry, bases []string) {
	if e.NoValue || e.Value == "" {
		return
	}
	why := fmt.Sprintf("named by %s (%s:%d), which git outside runs", e.Name, e.File, e.Line)
	switch e.Kind() {
	case gitconfig.HooksDir:
		for _, p := range s.resolve(e.Value, bases) {
			s.holds = append(s.holds, hold{path: p, dir: true, exact: true, why: whyHooks})
		}
	case gitconfig.TemplateDir:
		for _, p := range s.resolve(e.Value, bases) {
			s.holds = append(s.holds, hold{path: p, dir: true, why: why})
		}
	case gitconfig.Command:
		for _, w := range gitconfig.Words(e.Value) {
			s.commandWord(w, bases, why)
		}
		s.importDirs(e, bases, why)
		// A script is held missing or not, named with a directory or not:
		// sh x.sh reads ./x.sh.
		for _, w := range gitconfig.Scripts(e.Value) {
			for _, p := range s.resolve(w, bases) {
				s.holds = append(s.holds, hold{path: p, why: why})
			}
		}
		// Whatever a session put in the directory a program is picked in
		// could be the one that runs; never the base itself (a
		// repository's top), which stays writable.
		for _, dir := range gitconfig.ProgramDirs(e.Value) {
			for _, p := range s.resolve(dir, bases) {
				if !slices.Contains(bases, p) {
					s.holds = append(s.holds, hold{path: p, dir: true, why: why + ", which picks its program in it"})
				}
			}
		}
	}
}

// importDirs holds the directories a command that runs Python, Perl or
// Ruby loads modules from first (importdirs.go), or refuses one that is
// where git runs it: a repository's top, which stays writable.
func (s *gitScan) importDirs(e gitconfig.Entry, bases []string, why string) {
	lang, dirs := gitconfig.ImportDirs(e.Value)
	for _, d := range dirs {
		if strings.Contains(d, "$") {
			continue // computed: which one cannot be known
		}
		for _, p := range s.resolve(d, bases) {
			switch {
			case !s.writable(p):
			case slices.Contains(bases, p):
				s.refused = append(s.refused, importRefusal(fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Name), e.Value, lang, importDirName(d),
					"git outside runs it in the repository's top, "+p))
			default:
				s.holds = append(s.holds, hold{path: p, dir: true, why: why + ", which loads modules from it first"})
			}
		}
	}
}

// commandWord holds the file one word of a command names, if it names one.
func (s *gitScan) commandWord(w string, bases []string, why string) {
	if strings.ContainsAny(w, "$*?[=") || strings.Contains(w, "://") {
		return // expanded by the shell, an option (its value is a word of its own), or a URL
	}
	slash := strings.Contains(w, "/")
	for _, p := range s.resolve(w, bases) {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			// A directory is not run; the program in it is named by another word.
		case err == nil && fi.Mode().IsRegular(), slash:
			// A bare word is a program found on PATH, unless a file of that
			// name is where the command runs.
			s.holds = append(s.holds, hold{path: p, why: why})
		}
	}
}

// resolve turns a path value into absolute paths where the sandbox can
// write: "~/" is the home, a relative value is taken from each base.
func (s *gitScan) resolve(value string, bases []string) []string {
	v, ok := gitconfig.ExpandHome(value, s.home)
	if !ok || v == "" {
		return nil
	}
	var out []string
	if filepath.IsAbs(v) {
		out = []string{filepath.Clean(v)}
	} else {
		for _, b := range bases {
			out = append(out, filepath.Join(b, v))
		}
	}
	return out
}

// nameRules groups the names the sandbox may not create by directory and
// reason, in a stable order. Names in a directory that a read-only mount
// already holds need no rule; a name that a mount holds still does,
// because a program outside may replace or remove what is there during the
// session, and with it the mount.
func nameRules(mounts []mount, missing []missingName) []namerule.InDir {
	type key struct{ dir, why string }
	names := map[key][]string{}
	var keys []key
	for _, m := range missing {
		if m.dir == "" || heldBy(mounts, m.dir) {
			continue
		}
		k := key{m.dir, m.why}
		if _, ok := names[k]; !ok {
			keys = append(keys, k)
		}
		if !contains(names[k], m.name) {
			names[k] = append(names[k], m.name)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].dir != keys[j].dir {
			return keys[i].dir < keys[j].dir
		}
		return keys[i].why < keys[j].why
	})
	out := make([]namerule.InDir, 0, len(keys))
	for _, k := range keys {
		sort.Strings(names[k])
		out = append(out, namerule.InDir{Dir: k.dir, Names: names[k], Why: k.why})
	}
	return out
}
