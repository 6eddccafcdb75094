// The one walk a launch makes of where the sandbox can write, for every
// repository and toolchain file the readers hold (walkNames), and what it
// tells of the git store's links.

package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/claude-sandbox/claude-sandbox/internal/foldname"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"golang.org/x/sys/unix"
)

// A foundEntry is an entry the walk looks for, found in a tree: a ".git"
// (a git directory, a "gitdir:" file, or a link to either), another
// version-control system's repository directory, a file that picks a
// toolchain's program.
type foundEntry struct {
	path string
	kind byte // unix.DT_DIR, unix.DT_REG, unix.DT_LNK or another DT_ type
	// rule is the name of walkNames the entry's name is a spelling of:
	// ".git" for ".GIT" (foldname.Same: a tool outside on a workspace
	// that folds case finds one as the other).
	rule string
}

// walkNames are the names the walk reports; true marks a repository's
// directory, which the walk does not enter (its objects are most of a
// repository). One walk finds them all: another would cost as much again.
var walkNames = func() map[string]bool {
	m := map[string]bool{".git": true}
	for _, d := range vcsDirs {
		m[d.name] = true
	}
	for _, f := range selectorFiles {
		m[f.name] = false
	}
	return m
}()

// walkKeys are walkNames by their keys (foldname.Key), each with its name.
var walkKeys = func() map[string]string {
	m := map[string]string{}
	for n := range walkNames {
		m[foldname.Key(n)] = n
	}
	return m
}()

// walkRule says which of walkNames name is a spelling of, and whether that
// is a repository's directory.
func walkRule(name string) (rule string, repo, ok bool) {
	if repo, ok := walkNames[name]; ok {
		return name, repo, true
	}
	key := foldname.Key(name)
	if rule, ok := walkKeys[key]; ok {
		return rule, walkNames[rule], true
	}
	if !foldname.Exact(key) {
		for k, rule := range walkKeys {
			if foldname.SameKey(k, key) {
				return rule, walkNames[rule], true
			}
		}
	}
	return "", false, false
}

// findEntries returns every entry named in walkNames under the roots, at
// any depth, sorted by path. It is the one full walk a launch makes, so it
// is built for speed: getdents64 with the entry types it returns (a stat
// only where the file system gives no type), no descent into repository
// directories, no following of links (a link leads out of the tree or to a
// place the walk reaches anyway), and directories read in parallel. A
// directory the user cannot read is skipped: a tool outside, run by the
// same user, cannot enter it either.
func findEntries(roots []string) ([]foundEntry, error) {
	w := &walker{pending: len(roots), queue: append([]string{}, roots...)}
	w.cond = sync.NewCond(&w.mu)
	n := 2 * runtime.GOMAXPROCS(0) // readdir blocks in the kernel: more workers than CPUs keep them busy
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	wg.Wait()
	if w.err != nil {
		return nil, w.err
	}
	sort.Slice(w.found, func(i, j int) bool { return w.found[i].path < w.found[j].path })
	return w.found, nil
}

type walker struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []string // directories not read yet
	pending int      // directories queued or being read
	found   []foundEntry
	err     error
}

func (w *walker) work() {
	buf := make([]byte, 64<<10)
	var subdirs []string
	var found []foundEntry
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && w.pending > 0 && w.err == nil {
			w.cond.Wait()
		}
		if w.pending == 0 || w.err != nil {
			w.mu.Unlock()
			return
		}
		dir := w.queue[len(w.queue)-1]
		w.queue = w.queue[:len(w.queue)-1]
		w.mu.Unlock()

		subdirs, found = subdirs[:0], found[:0]
		err := readDir(dir, buf, func(name string, kind byte) {
			p := dir + "/" + name
			if dir == "/" {
				p = "/" + name
			}
			rule, repo, ok := walkRule(name)
			if ok {
				found = append(found, foundEntry{p, kind, rule})
			}
			if kind == unix.DT_DIR && !repo {
				subdirs = append(subdirs, p)
			}
		})

		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = err
		}
		w.found = append(w.found, found...)
		w.queue = append(w.queue, subdirs...)
		w.pending += len(subdirs) - 1
		w.cond.Broadcast()
		w.mu.Unlock()
	}
}

// readDir calls fn for each entry of dir with its type. Entries whose type
// the file system does not report are looked at with fstatat, without
// following links.
func readDir(dir string, buf []byte, fn func(name string, kind byte)) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if skippable(err) {
			return nil
		}
		return fmt.Errorf("cannot read %s to find repositories and toolchain files: %w", dir, err)
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			if skippable(err) {
				return nil
			}
			return fmt.Errorf("cannot read %s to find repositories and toolchain files: %w", dir, err)
		}
		if n == 0 {
			return nil
		}
		for off := 0; off < n; {
			name, kind, reclen := dirent(buf[off:])
			off += reclen
			if name == "." || name == ".." {
				continue
			}
			if kind == unix.DT_UNKNOWN {
				kind = statKind(fd, name)
			}
			fn(name, kind)
		}
	}
}

// dirent reads the struct linux_dirent64 at the start of buf (ino u64,
// off s64, reclen u16, type u8, name): its name, type and length.
func dirent(buf []byte) (name string, kind byte, reclen int) {
	reclen = int(binary.NativeEndian.Uint16(buf[16:]))
	raw := buf[19:reclen]
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		raw = raw[:i]
	}
	return string(raw), buf[18], reclen
}

func statKind(dirfd int, name string) byte {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return unix.DT_UNKNOWN
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFLNK:
		return unix.DT_LNK
	}
	return unix.DT_UNKNOWN
}

// skippable are errors of a directory that vanished, changed into
// something else, or that the user may not read.
func skippable(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) ||
		errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

// GitStoreLinks walks the roots as a launch does and returns, by path, the
// ".git" links that lead into the git store inside (ADR 0034), each with
// the name of the store's entry it leads to.
func GitStoreLinks(roots []string) (map[string]string, error) {
	found, err := findEntries(roots)
	if err != nil {
		return nil, err
	}
	links := map[string]string{}
	for _, e := range found {
		if e.kind != unix.DT_LNK || filepath.Base(e.path) != ".git" {
			continue
		}
		target, ok := readlinkBeneath(roots, e.path)
		if !ok {
			continue
		}
		if name, _, ok := GitStoreTarget(target); ok {
			links[e.path] = name
		}
	}
	return links, nil
}

// readlinkBeneath reads the link at path, reached from the root it lies
// below one component at a time and through no link: the walk reads
// directories by path, and one a session swapped for a link meanwhile
// leads this read nowhere outside the roots.
func readlinkBeneath(roots []string, path string) (string, bool) {
	for _, root := range roots {
		rel, err := filepath.Rel(root, path)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", false
		}
		defer unix.Close(rfd)
		dfd, err := unix.Openat2(rfd, filepath.Dir(rel), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			return "", false
		}
		defer unix.Close(dfd)
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(dfd, filepath.Base(rel), buf)
		if err != nil {
			return "", false
		}
		return string(buf[:n]), true
	}
	return "", false
}

// GitStoreEntry reads the link at path and returns the name of the git
// store's entry it leads to, if it leads to one as the warden makes them:
// the store's path inside and a single name, a git directory, or below it
// the ".git" file at the end of a chain of directories "d" (file set).
func GitStoreEntry(path string) (name string, file, ok bool) {
	target, err := os.Readlink(path)
	if err != nil {
		return "", false, false
	}
	return GitStoreTarget(target)
}

// GitStoreTarget is GitStoreEntry of a link's target, read already.
func GitStoreTarget(target string) (name string, file, ok bool) {
	rest, ok := strings.CutPrefix(target, layout.InsideGitStore+"/")
	if !ok {
		return "", false, false
	}
	name, below, file := strings.Cut(rest, "/")
	if name == "" || name == "." || name == ".." {
		return "", false, false
	}
	if file {
		for below != ".git" {
			var d bool
			if below, d = strings.CutPrefix(below, "d/"); !d {
				return "", false, false
			}
		}
	}
	return name, file, true
}
