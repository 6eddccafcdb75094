// Package gitstore is the user's side of a workspace's git store
// (ADR 0034): which repositories the workspace's sessions made, and their
// adoption outside. A repository made in a session keeps its git directory
// in the store, where git outside never looks; adopting it gives the
// working tree a git directory of its own again, made by git outside, into
// which only data is carried (objects, refs, HEAD, the index, reflogs):
// nothing a session wrote that git would run or obey.
package gitstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/gitconfig"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/termtext"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// An Entry is one git directory or git file of the store.
type Entry struct {
	Name  string   // its name in the store
	Path  string   // where it is outside
	Dir   bool     // a git directory (else the entry of a "gitdir:" file)
	Links []string // the ".git" links in the workspace that lead to it, sorted
}

// List returns the store's entries, each with the links (from
// sandbox.GitStoreLinks) that lead to it. A store that does not exist yet
// has none. An entry is looked at beneath the store only: one a session
// made a link is no git directory.
func List(store string, links map[string]string) ([]Entry, error) {
	st, err := openTree(store)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	names, err := st.names("")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	byName := map[string][]string{}
	for link, name := range links {
		byName[name] = append(byName[name], link)
	}
	var out []Entry
	for _, name := range names {
		fi, err := st.lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		_, err = st.lstat(name + "/HEAD")
		e := Entry{Name: name, Path: st.where(name), Dir: fi.Mode&unix.S_IFMT == unix.S_IFDIR && err == nil, Links: byName[name]}
		sort.Strings(e.Links)
		out = append(out, e)
	}
	return out, nil
}

// Prune removes from store the entries no link leads to, and returns
// them. Each is removed beneath the store by descriptor: an entry a
// session turned into a link since it was listed is the link alone.
func Prune(store string, entries []Entry) ([]Entry, error) {
	st, err := openTree(store)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var gone []Entry
	for _, e := range entries {
		if len(e.Links) > 0 {
			continue
		}
		if err := st.removeAll(e.Name); err != nil {
			return gone, err
		}
		gone = append(gone, e)
	}
	return gone, nil
}

// A Store is a workspace's git store outside: Dir, the git directories
// of repositories made in sessions (bound at layout.InsideGitStore), and
// Binds, the store's directories bound in the workspace, by where
// (worktrees/, modules/).
type Store struct {
	Dir   string
	Binds map[string]string
}

// An Adoption is what Adopt carried and left.
type Adoption struct {
	Dir       string
	Submodule string   // the git directory a submodule's adoption made, if it was one
	Head      string   // what HEAD names
	Refs      int      // loose and packed refs carried
	Remotes   []string // "NAME URL" of the remotes the session configured, which are not carried
	Skipped   []string // store paths not carried: not data git reads, or not a plain file
}

// Adopt makes dir's ".git", a link into store (the workspace's store
// outside), a git directory of its own: git outside makes a new repository
// with the user's defaults, the repository's data is copied into it, the
// link is replaced by it, and the store's entry is removed. Nothing in dir
// changes unless all of that succeeds but the last step. Run it once the
// sessions that use the repository have ended.
//
// Every path a session laid is followed beneath a directory opened once:
// the link is read and replaced in dir's descriptor, the entry it names
// is read and removed beneath the store's.
func Adopt(store Store, dir string) (*Adoption, error) {
	wt, err := openTree(dir)
	if err != nil {
		return nil, err
	}
	defer wt.Close()
	link := wt.where(".git")
	target, err := wt.readlink(".git")
	name, file, ok := sandbox.GitStoreTarget(target)
	if err != nil || !ok {
		return nil, fmt.Errorf("%s is not a link into the git store of a sandbox (ADR 0034)", link)
	}
	st, err := openTree(store.Dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	fi, err := st.lstat(name)
	if err != nil {
		return nil, fmt.Errorf("%s leads to %s, which is not in this workspace's git store %s: %w", link, name, store.Dir, err)
	}
	if file {
		return adoptSubmodule(store, st, wt, target)
	}
	if fi.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("%s is not a git directory", st.where(name))
	}
	if _, err := st.lstat(name + "/commondir"); err == nil {
		return nil, fmt.Errorf("%s is a linked worktree's git directory: its commits are in the repository it belongs to", st.where(name))
	}
	from, err := st.sub(name)
	if err != nil {
		return nil, err
	}
	defer from.Close()
	a := &Adoption{Dir: dir}
	tmp, err := a.rebuild(wt, ".git-adopt-", from)
	if err != nil {
		return nil, err
	}
	// The link goes only once everything is in place; should the rename
	// fail, the link comes back.
	if err := replaceLink(wt, ".git", tmp); err != nil {
		wt.removeAll(tmp)
		if lerr := unix.Symlinkat(target, wt.fd, ".git"); lerr != nil && !errors.Is(lerr, unix.EEXIST) {
			return nil, fmt.Errorf("%w; and the link %s could not be made again: %v", err, link, lerr)
		}
		return nil, err
	}
	if err := st.removeAll(name); err != nil {
		return a, fmt.Errorf("adopted, but the store's copy %s stays: %w", st.where(name), err)
	}
	return a, nil
}

// replaceLink puts the directory tmp of t in place of the link name of t,
// which must still be a link.
func replaceLink(t *tree, name, tmp string) error {
	if err := unix.Unlinkat(t.fd, name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: t.where(name), Err: err}
	}
	if err := unix.Renameat(t.fd, tmp, t.fd, name); err != nil {
		return &os.PathError{Op: "rename", Path: t.where(tmp), Err: err}
	}
	return nil
}

// adoptSubmodule adopts a working tree whose .git is a "gitdir:" file in
// the store naming a git directory in the store's modules/ (a submodule
// initialised in a session): git outside makes the git directory where the
// file names it, only data is carried into it, it is pointed at the
// working tree as git does, and the link becomes the file git would have
// written. The submodule's URL is the superproject's configuration, which
// `git submodule init` writes outside. The file, and the git directory it
// names, are read beneath the store's directories.
func adoptSubmodule(store Store, st, wt *tree, target string) (*Adoption, error) {
	dir, link := wt.Path, wt.where(".git")
	inStore := strings.TrimPrefix(target, layout.InsideGitStore+"/")
	data, err := st.read(inStore)
	if err != nil {
		return nil, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	gitdir, ok := strings.CutPrefix(line, "gitdir: ")
	if !ok || gitdir == "" {
		return nil, fmt.Errorf("%s is not a \"gitdir:\" file", st.where(inStore))
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	gitdir = filepath.Clean(gitdir)
	var modules, rel string
	for where, from := range store.Binds {
		if r, err := filepath.Rel(where, gitdir); err == nil && r != "." && !strings.HasPrefix(r, "..") && filepath.Base(where) == "modules" {
			modules, rel = from, r
		}
	}
	if modules == "" {
		return nil, fmt.Errorf("%s names %s, which is no submodule's git directory in the store: a linked worktree's (its commits are on the repository's branches; check one out outside) or another repository's", link, gitdir)
	}
	mt, err := openTree(modules)
	if err != nil {
		return nil, err
	}
	defer mt.Close()
	from, err := mt.sub(rel)
	if err != nil {
		return nil, err
	}
	defer from.Close()
	if _, err := os.Lstat(gitdir); err == nil {
		return nil, fmt.Errorf("%s exists outside already: the submodule was initialised outside too; remove %s and run git submodule update outside instead", gitdir, dir)
	}
	a := &Adoption{Dir: dir, Submodule: gitdir}
	if err := os.MkdirAll(filepath.Dir(gitdir), 0o777); err != nil {
		return nil, err
	}
	parent, err := openTree(filepath.Dir(gitdir))
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	tmp, err := a.rebuild(parent, ".adopt-", from)
	if err != nil {
		return nil, err
	}
	worktree, _ := filepath.Rel(gitdir, dir)
	if err := git("--git-dir="+parent.where(tmp), "config", "core.worktree", worktree); err != nil {
		parent.removeAll(tmp)
		return nil, err
	}
	if err := unix.Renameat(parent.fd, tmp, parent.fd, filepath.Base(gitdir)); err != nil {
		parent.removeAll(tmp)
		return nil, &os.PathError{Op: "rename", Path: parent.where(tmp), Err: err}
	}
	back, _ := filepath.Rel(dir, gitdir)
	if err := writeGitFile(wt, back); err != nil {
		parent.removeAll(filepath.Base(gitdir))
		if lerr := unix.Symlinkat(target, wt.fd, ".git"); lerr != nil && !errors.Is(lerr, unix.EEXIST) {
			return nil, fmt.Errorf("%w; and the link %s could not be made again: %v", err, link, lerr)
		}
		return nil, err
	}
	for _, p := range []struct {
		t   *tree
		rel string
	}{{st, strings.SplitN(inStore, "/", 2)[0]}, {mt, rel}} {
		if err := p.t.removeAll(p.rel); err != nil {
			return a, fmt.Errorf("adopted, but the store's copy %s stays: %w", p.t.where(p.rel), err)
		}
	}
	return a, nil
}

// writeGitFile replaces the link ".git" of wt by the file git writes for a
// submodule, naming its git directory at back.
func writeGitFile(wt *tree, back string) error {
	if err := unix.Unlinkat(wt.fd, ".git", 0); err != nil {
		return &os.PathError{Op: "remove", Path: wt.where(".git"), Err: err}
	}
	fd, err := wt.open(".git", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), wt.where(".git"))
	_, err = f.WriteString("gitdir: " + back + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(wt.fd, ".git", 0)
	}
	return err
}

// rebuild makes, in a new directory in parent, the git directory adopt
// gives outside to the stored git directory from: made by git outside with
// the same object format, with from's data copied in. It returns the new
// directory's name in parent; nothing is left on failure.
func (a *Adoption) rebuild(parent *tree, prefix string, from *tree) (string, error) {
	format, err := a.readConfig(from)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent.Path, prefix)
	if err != nil {
		return "", err
	}
	name := filepath.Base(tmp)
	to, err := parent.sub(name)
	if err == nil {
		defer to.Close()
		if err = initRepository(parent.where(name), format); err == nil {
			err = a.copyData(from, to)
		}
	}
	if err != nil {
		parent.removeAll(name)
		return "", err
	}
	return name, nil
}

// readConfig reads from the stored repository's configuration only what a
// new repository must share with it (the object format) and what the user
// should hear of (its remotes). A reftable repository is refused: its refs
// are not files this copy can check.
func (a *Adoption) readConfig(entry *tree) (format string, err error) {
	path := entry.where("config")
	data, err := entry.read("config")
	if err != nil {
		return "", err
	}
	entries, err := gitconfig.Parse(path, data)
	if err != nil {
		return "", err
	}
	remotes := map[string]string{}
	for _, e := range entries {
		switch {
		case e.Name == "extensions.objectformat":
			format = strings.ToLower(e.Value)
		case e.Name == "extensions.refstorage" && !strings.EqualFold(e.Value, "files"):
			return "", fmt.Errorf("%s keeps its refs in %q, which adopt cannot check; push its branches to a repository outside instead", entry.Path, e.Value)
		case e.Section() == "remote" && e.Key() == "url" && e.Subsection() != "":
			remotes[e.Subsection()] = e.Value
		}
	}
	if format != "" && format != "sha1" && format != "sha256" {
		return "", fmt.Errorf("%s: unknown object format %q", path, format)
	}
	for n, u := range remotes {
		a.Remotes = append(a.Remotes, n+" "+u)
	}
	sort.Strings(a.Remotes)
	return format, nil
}

// initRepository makes a new repository's git directory at dir with git
// outside, as the user's own `git init` would (their template, default
// branch and configuration), for a working tree: git directory and working
// tree are told apart by the link being replaced, so core.bare must say
// so.
func initRepository(dir, format string) error {
	args := []string{"init", "--quiet", "--bare"}
	if format != "" {
		args = append(args, "--object-format="+format)
	}
	for _, c := range [][]string{append(args, dir), {"--git-dir=" + dir, "config", "core.bare", "false"}, {"--git-dir=" + dir, "config", "core.logAllRefUpdates", "true"}} {
		if err := git(c...); err != nil {
			return err
		}
	}
	return nil
}

// git runs git outside, on a repository adopt made.
func git(args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Env = gitEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// gitEnv is the environment without git's variables that would point the
// command at another repository or configuration.
func gitEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(name, "GIT_") && name != "GIT_CONFIG_GLOBAL" && name != "GIT_CONFIG_SYSTEM" && name != "GIT_CONFIG_NOSYSTEM"
	})
}

var (
	objectID   = `([0-9a-f]{40}|[0-9a-f]{64})`
	looseRef   = regexp.MustCompile(`^(` + objectID + `|ref: refs/[^\x00-\x20\x7f]+)\n?$`)
	packedLine = regexp.MustCompile(`^(# pack-refs with:[^\n]*|` + objectID + ` refs/[^\x00-\x20\x7f]+|\^` + objectID + `)$`)
	idLines    = regexp.MustCompile(`^(` + objectID + `\n)*$`)
)

// copyData copies into the new git directory what git keeps as data: the
// objects, the refs, HEAD, the index and the reflogs. Refs and HEAD must
// read as refs do; a file elsewhere that is not a plain file is skipped
// and reported, as is the objects' alternates list (it names other object
// stores, which need not exist outside).
func (a *Adoption) copyData(from, to *tree) error {
	head, err := from.read("HEAD")
	if err != nil {
		return err
	}
	if !looseRef.Match(head) {
		return fmt.Errorf("%s/HEAD does not name a ref or an object", from.Path)
	}
	a.Head = strings.TrimPrefix(strings.TrimSpace(string(head)), "ref: ")
	if err := to.write("HEAD", head, 0o644); err != nil {
		return err
	}
	if data, err := from.read("packed-refs"); err == nil {
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if !packedLine.MatchString(line) {
				return fmt.Errorf("%s/packed-refs:%d: not a packed ref", from.Path, i+1)
			}
			if !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "^") {
				a.Refs++
			}
		}
		if err := to.write("packed-refs", data, 0o644); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if data, err := from.read("shallow"); err == nil {
		if !idLines.Match(data) {
			return fmt.Errorf("%s/shallow does not list object IDs", from.Path)
		}
		if err := to.write("shallow", data, 0o644); err != nil {
			return err
		}
	}
	if err := a.copyTree(from, to, "refs", func(rel string, data []byte) error {
		if !looseRef.Match(data) {
			return fmt.Errorf("%s/%s is not a ref", from.Path, rel)
		}
		a.Refs++
		return nil
	}); err != nil {
		return err
	}
	for _, part := range []string{"objects", "logs"} {
		if err := a.copyTree(from, to, part, nil); err != nil {
			return err
		}
	}
	return a.copyIndex(from, to)
}

// copyTree copies rel below from to the same place below to, walking
// beneath from by descriptor: directories and plain files, each file
// checked first when check is set. Links and other kinds are skipped and
// reported.
func (a *Adoption) copyTree(from, to *tree, rel string, check func(rel string, data []byte) error) error {
	fi, err := from.lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case fi.Mode&unix.S_IFMT == unix.S_IFDIR:
		if err := to.mkdir(rel, 0o755); err != nil {
			return err
		}
		names, err := from.names(rel)
		if err != nil {
			return err
		}
		sort.Strings(names)
		for _, n := range names {
			if err := a.copyTree(from, to, filepath.Join(rel, n), check); err != nil {
				return err
			}
		}
		return nil
	case fi.Mode&unix.S_IFMT != unix.S_IFREG, rel == filepath.Join("objects", "info", "alternates"):
		a.Skipped = append(a.Skipped, rel)
		return nil
	}
	data, err := from.read(rel)
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(rel, data); err != nil {
			return err
		}
	}
	mode := uint32(0o644)
	if strings.HasPrefix(rel, "objects"+string(filepath.Separator)) {
		mode = 0o444 // as git leaves its objects
	}
	return to.write(rel, data, mode)
}

// Report says what an adoption carried and what it left, one line each.
// Names and URLs are the session's: they are escaped, and no command is
// written out with them for the user to paste.
func (a *Adoption) Report(w io.Writer) {
	lines := []string{fmt.Sprintf("adopted %s: %d refs, HEAD %s; its configuration, hooks and info/ were not carried (git made new ones)", a.Dir, a.Refs, a.Head)}
	if a.Submodule != "" {
		lines = append(lines, fmt.Sprintf("  a submodule, its git directory now %s: git submodule init, outside, records its URL in the superproject's configuration from .gitmodules, which a session may have written: read the URL first", a.Submodule))
	}
	for _, r := range a.Remotes {
		n, u, _ := strings.Cut(r, " ")
		lines = append(lines, fmt.Sprintf("  remote %s was %s: not carried (git remote add, after checking the URL, to use it again)", n, u))
	}
	for _, s := range a.Skipped {
		lines = append(lines, fmt.Sprintf("  not carried: %s (not a plain file, or not data)", s))
	}
	for _, l := range lines {
		fmt.Fprintln(w, termtext.Escape(l))
	}
}
