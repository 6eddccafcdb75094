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
	"syscall"

	"github.com/claude-sandbox/claude-sandbox/gitconfig"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/termtext"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
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
// has none.
func List(store string, links map[string]string) ([]Entry, error) {
	des, err := os.ReadDir(store)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	byName := map[string][]string{}
	for link, name := range links {
		byName[name] = append(byName[name], link)
	}
	var out []Entry
	for _, de := range des {
		path := filepath.Join(store, de.Name())
		_, err := os.Lstat(filepath.Join(path, "HEAD"))
		e := Entry{Name: de.Name(), Path: path, Dir: de.IsDir() && err == nil, Links: byName[de.Name()]}
		sort.Strings(e.Links)
		out = append(out, e)
	}
	return out, nil
}

// Prune removes the entries no link leads to, and returns them.
func Prune(entries []Entry) ([]Entry, error) {
	var gone []Entry
	for _, e := range entries {
		if len(e.Links) > 0 {
			continue
		}
		if err := os.RemoveAll(e.Path); err != nil {
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
func Adopt(store Store, dir string) (*Adoption, error) {
	link := filepath.Join(dir, ".git")
	name, file, ok := sandbox.GitStoreEntry(link)
	if !ok {
		return nil, fmt.Errorf("%s is not a link into the git store of a sandbox (ADR 0034)", link)
	}
	entry := filepath.Join(store.Dir, name)
	fi, err := os.Lstat(entry)
	if err != nil {
		return nil, fmt.Errorf("%s leads to %s, which is not in this workspace's git store %s: %w", link, name, store.Dir, err)
	}
	if file {
		return adoptSubmodule(store, dir, link, entry)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a git directory", entry)
	}
	if _, err := os.Lstat(filepath.Join(entry, "commondir")); err == nil {
		return nil, fmt.Errorf("%s is a linked worktree's git directory: its commits are in the repository it belongs to", entry)
	}
	a := &Adoption{Dir: dir}
	tmp, err := a.rebuild(dir, ".git-adopt-", entry)
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	// The link goes only once everything is in place; should the rename
	// fail, the link comes back.
	if err := os.Remove(link); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, link); err != nil {
		if lerr := os.Symlink(filepath.Join(layout.InsideGitStore, name), link); lerr != nil {
			return nil, fmt.Errorf("%w; and the link %s could not be made again: %v", err, link, lerr)
		}
		return nil, err
	}
	done = true
	if err := os.RemoveAll(entry); err != nil {
		return a, fmt.Errorf("adopted, but the store's copy %s stays: %w", entry, err)
	}
	return a, nil
}

// adoptSubmodule adopts a working tree whose .git is a "gitdir:" file in
// the store naming a git directory in the store's modules/ (a submodule
// initialised in a session): git outside makes the git directory where the
// file names it, only data is carried into it, it is pointed at the
// working tree as git does, and the link becomes the file git would have
// written. The submodule's URL is the superproject's configuration, which
// `git submodule init` writes outside.
func adoptSubmodule(store Store, dir, link, entry string) (*Adoption, error) {
	target, _ := os.Readlink(link)
	fileInStore := filepath.Join(store.Dir, strings.TrimPrefix(target, layout.InsideGitStore+"/"))
	data, err := readPlain(fileInStore)
	if err != nil {
		return nil, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	gitdir, ok := strings.CutPrefix(line, "gitdir: ")
	if !ok || gitdir == "" {
		return nil, fmt.Errorf("%s is not a \"gitdir:\" file", fileInStore)
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	gitdir = filepath.Clean(gitdir)
	var stored string
	for where, from := range store.Binds {
		if rel, err := filepath.Rel(where, gitdir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") && filepath.Base(where) == "modules" {
			stored = filepath.Join(from, rel)
		}
	}
	if stored == "" {
		return nil, fmt.Errorf("%s names %s, which is no submodule's git directory in the store: a linked worktree's (its commits are on the repository's branches; check one out outside) or another repository's", link, gitdir)
	}
	if _, err := os.Lstat(gitdir); err == nil {
		return nil, fmt.Errorf("%s exists outside already: the submodule was initialised outside too; remove %s and run git submodule update outside instead", gitdir, dir)
	}
	a := &Adoption{Dir: dir, Submodule: gitdir}
	if err := os.MkdirAll(filepath.Dir(gitdir), 0o777); err != nil {
		return nil, err
	}
	tmp, err := a.rebuild(filepath.Dir(gitdir), ".adopt-", stored)
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	worktree, _ := filepath.Rel(gitdir, dir)
	if err := git("--git-dir="+tmp, "config", "core.worktree", worktree); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, gitdir); err != nil {
		return nil, err
	}
	back, _ := filepath.Rel(dir, gitdir)
	if err := os.Remove(link); err != nil {
		os.RemoveAll(gitdir)
		return nil, err
	}
	if err := os.WriteFile(link, []byte("gitdir: "+back+"\n"), 0o644); err != nil {
		os.RemoveAll(gitdir)
		if lerr := os.Symlink(target, link); lerr != nil {
			return nil, fmt.Errorf("%w; and the link %s could not be made again: %v", err, link, lerr)
		}
		return nil, err
	}
	done = true
	for _, p := range []string{entry, stored} {
		if err := os.RemoveAll(p); err != nil {
			return a, fmt.Errorf("adopted, but the store's copy %s stays: %w", p, err)
		}
	}
	return a, nil
}

// rebuild makes, in a new directory in parent, the git directory adopt
// gives outside to the stored git directory from: made by git outside with
// the same object format, with from's data copied in. Nothing is left on
// failure.
func (a *Adoption) rebuild(parent, prefix, from string) (string, error) {
	format, err := a.readConfig(from)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", err
	}
	if err = initRepository(tmp, format); err == nil {
		err = a.copyData(from, tmp)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}

// readConfig reads from the stored repository's configuration only what a
// new repository must share with it (the object format) and what the user
// should hear of (its remotes). A reftable repository is refused: its refs
// are not files this copy can check.
func (a *Adoption) readConfig(entry string) (format string, err error) {
	path := filepath.Join(entry, "config")
	data, err := readPlain(path)
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
			return "", fmt.Errorf("%s keeps its refs in %q, which adopt cannot check; push its branches to a repository outside instead", entry, e.Value)
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
func (a *Adoption) copyData(from, to string) error {
	head, err := readPlain(filepath.Join(from, "HEAD"))
	if err != nil {
		return err
	}
	if !looseRef.Match(head) {
		return fmt.Errorf("%s/HEAD does not name a ref or an object", from)
	}
	a.Head = strings.TrimPrefix(strings.TrimSpace(string(head)), "ref: ")
	if err := os.WriteFile(filepath.Join(to, "HEAD"), head, 0o644); err != nil {
		return err
	}
	if data, err := readPlain(filepath.Join(from, "packed-refs")); err == nil {
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if !packedLine.MatchString(line) {
				return fmt.Errorf("%s/packed-refs:%d: not a packed ref", from, i+1)
			}
			if !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "^") {
				a.Refs++
			}
		}
		if err := os.WriteFile(filepath.Join(to, "packed-refs"), data, 0o644); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if data, err := readPlain(filepath.Join(from, "shallow")); err == nil {
		if !idLines.Match(data) {
			return fmt.Errorf("%s/shallow does not list object IDs", from)
		}
		if err := os.WriteFile(filepath.Join(to, "shallow"), data, 0o644); err != nil {
			return err
		}
	}
	if err := a.copyTree(from, to, "refs", func(rel string, data []byte) error {
		if !looseRef.Match(data) {
			return fmt.Errorf("%s/%s is not a ref", from, rel)
		}
		a.Refs++
		return nil
	}); err != nil {
		return err
	}
	for _, part := range []string{"objects", "logs", "index"} {
		if err := a.copyTree(from, to, part, nil); err != nil {
			return err
		}
	}
	return nil
}

// readPlain reads a file of the store, which must be a plain file: a
// session may have left a link there to a file of the user's.
func readPlain(path string) ([]byte, error) {
	// O_NONBLOCK: a FIFO left there would block the open until a writer
	// came; opened at once, it is refused as not a plain file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is not a plain file", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a plain file", path)
	}
	return io.ReadAll(f)
}

// copyTree copies rel below from to the same place below to: directories
// and plain files, each file checked first when check is set. Links and
// other kinds are skipped and reported.
func (a *Adoption) copyTree(from, to, rel string, check func(rel string, data []byte) error) error {
	root := filepath.Join(from, rel)
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(from, path)
		dest := filepath.Join(to, r)
		switch {
		case d.IsDir():
			return os.MkdirAll(dest, 0o755)
		case !d.Type().IsRegular(), r == filepath.Join("objects", "info", "alternates"):
			a.Skipped = append(a.Skipped, r)
			return nil
		}
		data, err := readPlain(path)
		if err != nil {
			return err
		}
		if check != nil {
			if err := check(r, data); err != nil {
				return err
			}
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(r, "objects"+string(filepath.Separator)) {
			mode = 0o444 // as git leaves its objects
		}
		return os.WriteFile(dest, data, mode)
	})
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
