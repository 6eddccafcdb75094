package warden

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/claude-sandbox/claude-sandbox/internal/foldname"
	"github.com/claude-sandbox/claude-sandbox/internal/gitindex"
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

// git outside writes into the working tree whatever an index lists, with
// none of the checks it makes on a tree (ADR 0038). In a git directory the
// outside sees, a file becomes an index (index, sharedindex.<hash>) only
// by a rename the warden carries out: it reads what is renamed, checks
// every path listed, and copies it into a file of its own that it renames
// into place, which no task holds open. Every other way to make or write
// such a name is refused.

// carryPrefix begins the name of the warden's own copy on its way into
// place; it is an index name too, so no task can open it meanwhile.
const carryPrefix = "index.checked-"

const whyIndex = "git outside writes into the working tree whatever an index lists: one is made only by a rename the warden checks (ADR 0038)"

// indexName reports whether name is one git reads as an index in its git
// directory, in any spelling: the index, a shared index, or the warden's
// copy on its way. shared reports a shared index.
func indexName(name string) (index, shared bool) {
	key := foldname.Key(name)
	if foldname.SameKey("index", key) {
		return true, false
	}
	if strings.HasPrefix(key, "sharedindex.") {
		return true, true
	}
	return strings.HasPrefix(key, carryPrefix), false
}

// A gitDirRule is a namerule.GitDir by its directory's identity.
type gitDirRule struct {
	tops []string
}

func openGitDirs(dirs []namerule.GitDir) map[fileID]gitDirRule {
	out := map[fileID]gitDirRule{}
	for _, d := range dirs {
		var st unix.Stat_t
		if unix.Stat(d.Dir, &st) != nil {
			continue // gone since the launch: a .git made again is found by its name
		}
		tops := d.Tops
		if len(tops) == 0 {
			tops = []string{""}
		}
		out[fileID{st.Dev, st.Ino}] = gitDirRule{tops}
	}
	return out
}

// indexTops reports whether the directory dir is a git directory the
// outside sees, and the working trees git outside uses it from: one the
// launch found, or any directory named .git in any spelling (a repository
// made outside during the session), whose top is where it lies.
func (w *Warden) indexTops(dir int) ([]string, bool) {
	var st unix.Stat_t
	if unix.Fstat(dir, &st) != nil {
		return []string{""}, true // cannot tell: checked as one
	}
	if w.private[st.Dev] {
		return nil, false
	}
	p := fdPath(dir)
	if w.onInsideOnly(p, dir) {
		return nil, false
	}
	if g, ok := w.gitDirs[fileID{st.Dev, st.Ino}]; ok {
		return g.tops, true
	}
	if foldname.Same(".git", filepath.Base(p)) {
		return []string{filepath.Dir(p)}, true
	}
	return nil, false
}

// refuseIndex refuses r when it names an index in a git directory the
// outside sees: nothing but the warden's carried rename may make or write
// one.
func (w *Warden) refuseIndex(r resolved) (string, unix.Errno) {
	if r.dir < 0 {
		p := fdPath(r.file)
		if index, _ := indexName(filepath.Base(p)); !index {
			return "", 0
		}
		dir, err := unix.Openat2(w.root, strings.TrimPrefix(filepath.Dir(p), "/"), &unix.OpenHow{
			Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS,
		})
		if err != nil {
			return whyIndex, unix.EPERM
		}
		defer unix.Close(dir)
		r = resolved{dir: dir, name: filepath.Base(p), file: -1}
	}
	if index, _ := indexName(r.name); !index {
		return "", 0
	}
	if _, ok := w.indexTops(r.dir); !ok {
		return "", 0
	}
	return whyIndex, unix.EPERM
}

// renameIndex carries out a rename whose target is an index in a git
// directory the outside sees (carryIndex), and reports whether it did.
// The warden's own copy's name is refused as a target, as any write of it.
func (w *Warden) renameIndex(from, to resolved, flags uint64) (bool, unix.Errno) {
	if to.dir < 0 {
		return false, 0
	}
	index, shared := indexName(to.name)
	if !index || strings.HasPrefix(foldname.Key(to.name), carryPrefix) {
		return false, 0
	}
	tops, ok := w.indexTops(to.dir)
	if !ok {
		return false, 0
	}
	if e := w.checkRule(from); e != 0 {
		return true, e
	}
	return true, w.carryIndex(from, to, flags, tops, shared)
}

// carryIndex carries out a rename of from over to, a name git reads as an
// index in a git directory the outside sees (tops): from's content is
// checked (checkIndex), then copied into a new file the warden renames
// over to, and from is removed, as git expects of its rename of
// index.lock. A task may hold from open and write on after the check;
// nothing reaches the copy.
func (w *Warden) carryIndex(from, to resolved, flags uint64, tops []string, shared bool) unix.Errno {
	path := fdPath(to.dir) + "/" + to.name
	if flags&^unix.RENAME_NOREPLACE != 0 || from.dir < 0 {
		w.refused(path, whyIndex)
		return unix.EPERM
	}
	if mounted, err := mountPoint(to); err != nil || mounted {
		return unix.EBUSY
	}
	carrying <- struct{}{}
	defer func() { <-carrying }()
	data, mode, e := readRegular(from, maxIndex)
	if e != 0 {
		return e
	}
	if err := w.checkIndex(to.dir, data, tops, shared); err != nil {
		w.refused(path, "an index that "+err.Error()+": git outside would write it into the working tree (ADR 0038)")
		return unix.EPERM
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return unix.EIO
	}
	tmp := carryPrefix + hex.EncodeToString(b[:])
	fd, err := unix.Openat(to.dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return errnoOf(err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(os.FileMode(mode & 0o777))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat2(to.dir, tmp, to.dir, to.name, uint(flags))
	}
	if err != nil {
		unix.Unlinkat(to.dir, tmp, 0)
		return errnoOf(err)
	}
	return errnoOf(unix.Unlinkat(from.dir, from.name, 0))
}

func (w *Warden) refused(path, why string) {
	if w.Refused != nil {
		w.Refused(path, why)
	}
}

// maxIndex is the largest index the warden reads: 1 GiB, about git's
// index for ten million files. A larger file is refused (EFBIG) rather
// than read into the launcher's memory.
const maxIndex = 1 << 30

// carrying lets one index at a time be read and checked in the launcher,
// whatever number of workers and of wardens (the background service runs
// one per client sandbox) it holds: an index is read whole, and with the
// index it replaces when an entry needs it, so the launcher holds at most
// twice maxIndex of them, where a worker each could hold that much.
var carrying = make(chan struct{}, 1)

// readRegular reads the regular file r names, of at most max bytes,
// without following a link.
func readRegular(r resolved, max int64) ([]byte, uint32, unix.Errno) {
	fd, err := unix.Openat(r.dir, r.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, errnoOf(err)
	}
	f := os.NewFile(uintptr(fd), r.name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, errnoOf(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, 0, unix.EISDIR
	}
	if st.Size > max {
		return nil, 0, unix.EFBIG
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if int64(len(data)) > max {
		return nil, 0, unix.EFBIG
	}
	if err != nil {
		return nil, 0, errnoOf(err)
	}
	return data, st.Mode, 0
}

// checkIndex checks data, about to become an index of the git directory
// dir, used from tops, as git outside will read it (a split index merged
// with its shared index beside it): git must accept every path it lists,
// and none may be a path the sandbox could not write below a top
// (refusedPath), unless the entry is what the user's own data holds
// there (allowedAs).
func (w *Warden) checkIndex(dir int, data []byte, tops []string, shared bool) error {
	hashSize, err := w.hashSize(dir)
	if err != nil {
		return err
	}
	read := func(name string) ([]byte, error) {
		b, _, e := readRegular(resolved{dir: dir, name: name, file: -1}, maxIndex)
		if e != 0 {
			return nil, e
		}
		return b, nil
	}
	ix, err := readIndex(data, hashSize, shared, read)
	if err != nil {
		return err
	}
	// The index the rename replaces (git's own, or one checked so), read
	// only when an entry needs it.
	current := sync.OnceValue(func() map[string][]gitindex.Entry {
		b, err := read("index")
		if err != nil {
			return nil
		}
		cur, err := readIndex(b, hashSize, false, read)
		if err != nil {
			return nil
		}
		return byPath(cur)
	})
	return ix.Verify(w.indexRule(tops, current, hashSize))
}

// indexRule is the rule on an index's entries below tops: refusedPath's,
// but an entry at a refused path may be what the index it replaces holds
// there (current), or what the file there holds now, which the sandbox
// cannot have written: git outside would write nothing of the session's.
func (w *Warden) indexRule(tops []string, current func() map[string][]gitindex.Entry, hashSize int) func(gitindex.Entry) string {
	checks := make([]func(string) string, len(tops))
	for i, t := range tops {
		var keys []string
		if t != "" {
			keys = pathKeys(t)
		}
		checks[i] = w.pathChecker(keys)
	}
	return func(e gitindex.Entry) string {
		for i, check := range checks {
			why := check(e.Path)
			if why == "" || holds(current(), e) || tops[i] != "" && w.fileHolds(tops[i], e, hashSize) {
				continue
			}
			return why
		}
		return ""
	}
}

// readIndex reads an index as git outside will: a split index merged with
// its shared index, read (by name) beside it.
func readIndex(data []byte, hashSize int, shared bool, read func(name string) ([]byte, error)) (*gitindex.Index, error) {
	ix, err := gitindex.Parse(data, hashSize)
	if err != nil {
		return nil, err
	}
	if ix.Shared == "" {
		return ix, nil
	}
	if shared {
		return nil, errors.New("is a shared index that names another")
	}
	b, err := read("sharedindex." + ix.Shared)
	if err != nil {
		return nil, fmt.Errorf("names a shared index that cannot be read: %w", err)
	}
	base, err := gitindex.Parse(b, hashSize)
	if err != nil {
		return nil, fmt.Errorf("names a shared index that %w", err)
	}
	if err := ix.Merge(base); err != nil {
		return nil, err
	}
	return ix, nil
}

// byPath are an index's entries by path.
func byPath(ix *gitindex.Index) map[string][]gitindex.Entry {
	out := map[string][]gitindex.Entry{}
	for _, e := range ix.Entries {
		out[e.Path] = append(out[e.Path], e)
	}
	return out
}

// holds reports whether entries lists e's path with e's mode and object.
func holds(entries map[string][]gitindex.Entry, e gitindex.Entry) bool {
	for _, c := range entries[e.Path] {
		if c.Mode == e.Mode && c.ID == e.ID {
			return true
		}
	}
	return false
}

// fileHolds reports whether the file at e's path below top, as the
// sandbox sees it (no link followed), is a regular file with e's content
// and executable bit: the user's own, at a path the sandbox cannot write.
func (w *Warden) fileHolds(top string, e gitindex.Entry, hashSize int) bool {
	return fileIs(w.root, strings.TrimPrefix(top+"/"+e.Path, "/"), unix.RESOLVE_IN_ROOT, e, hashSize)
}

// fileIs reports whether path, from dir (resolved with resolve and no
// link followed), is a regular file holding the blob e names, with e's
// executable bit. It is opened for reading only once known to be a
// regular file: opening a device or a FIFO may do something.
func fileIs(dir int, path string, resolve uint64, e gitindex.Entry, hashSize int) bool {
	fd, err := unix.Openat2(dir, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: resolve | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > maxIndex {
		return false
	}
	if e.Mode != 0o100644 && e.Mode != 0o100755 || (e.Mode == 0o100755) != (st.Mode&0o100 != 0) {
		return false
	}
	f, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIndex))
	return err == nil && blobID(data, hashSize) == e.ID
}

// blobID is the object ID git gives a blob of data.
func blobID(data []byte, hashSize int) string {
	h := sha1.New()
	if hashSize == gitindex.SHA256 {
		h = sha256.New()
	}
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return string(h.Sum(nil))
}

// maxConfig is the most the warden reads of a git directory's commondir
// or config.
const maxConfig = 16 << 20

// hashSize is the size of the object IDs of the repository whose git
// directory is dir, as git outside reads it: from the configuration of its
// common directory, or, where that is the sandbox's copy, the copy as the
// launch read it (the sandbox may write the copy).
func (w *Warden) hashSize(dir int) (int, error) {
	common := dir
	if b, _, e := readRegular(resolved{dir: dir, name: "commondir", file: -1}, maxConfig); e == 0 {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(fdPath(dir), c)
		}
		fd, err := unix.Openat2(w.root, strings.TrimPrefix(filepath.Clean(c), "/"), &unix.OpenHow{
			Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT,
		})
		if err != nil {
			return 0, fmt.Errorf("is in a git directory whose common directory %s cannot be opened", c)
		}
		defer unix.Close(fd)
		common = fd
	}
	var st unix.Stat_t
	if err := unix.Fstat(common, &st); err != nil {
		return 0, err
	}
	var config []byte
	if c, ok := w.copies[fileID{st.Dev, st.Ino}]; ok && c.name == "config" && c.launch != "" {
		b, err := os.ReadFile(c.launch)
		if err != nil {
			return 0, err
		}
		config = b
	} else {
		b, _, e := readRegular(resolved{dir: common, name: "config", file: -1}, maxConfig)
		if e != 0 && e != unix.ENOENT {
			return 0, fmt.Errorf("is in a git directory whose config cannot be read: %v", e)
		}
		config = b
	}
	return objectFormat(config)
}

// objectFormat is the hash size of the object format a repository's
// configuration names (extensions.objectFormat; SHA-1 without one). git
// reads the repository's format from its own config file alone, with no
// include. Any value but sha1 and sha256 (a line continued, a value
// quoted in parts), or both, is refused: the file is one the sandbox
// cannot write, and git writes the variable plainly.
func objectFormat(config []byte) (int, error) {
	size := 0
	sc := bufio.NewScanner(bytes.NewReader(config))
	sc.Buffer(nil, len(config)+1)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			// A variable may follow its section's header on its line.
			_, line, _ = strings.Cut(line, "]")
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "objectformat") {
			continue
		}
		value, _, _ = strings.Cut(value, "#")
		value, _, _ = strings.Cut(value, ";")
		var s int
		switch strings.ToLower(strings.Trim(strings.TrimSpace(value), `"`)) {
		case "sha1":
			s = gitindex.SHA1
		case "sha256":
			s = gitindex.SHA256
		default:
			return 0, errors.New("is in a repository of an object format this check does not know")
		}
		if size != 0 && size != s {
			return 0, errors.New("is in a repository whose configuration names two object formats")
		}
		size = s
	}
	if size == 0 {
		size = gitindex.SHA1
	}
	return size, sc.Err()
}

// keyOutside keys the outside names, for refusedPath and refuse.
func (w *Warden) keyOutside() {
	w.outsideByKey = map[string]string{}
	for _, n := range w.outside {
		k := foldname.Key(n.Name)
		w.outsideKeys = append(w.outsideKeys, k)
		if _, ok := w.outsideByKey[k]; !ok {
			w.outsideByKey[k] = n.Why
		}
	}
}

// refusedPath says why the sandbox may not write rel, a path an index
// lists, below the working tree whose path's keys are top (nil when the
// launch could not tell the top): the rules the warden applies to every
// name the sandbox makes (an outside name at any depth, a name refused in
// a directory of its name, a protected path and the way to it, a
// directory's refused names), on the path as a working tree on any file
// system would take it (a backslash separates on one bound from Windows).
// "" for none.
func (w *Warden) refusedPath(top []string, rel string) string {
	return w.pathChecker(top)(rel)
}

// A seenDir is what refusedPath found of a directory an index's paths lie
// in: why it is refused, else its view and the directories' rules for it.
type seenDir struct {
	why string
	// onTheWay is why a file may not be there: it is on the way to a
	// protected path, where only a directory may be.
	onTheWay string
	view     pathView
	keys     []string // of its path from the root; nil below an unknown top
	rules    []dirRule
}

// pathChecker is refusedPath for the paths below one top, each directory
// worked out once: an index lists its paths in order, many in a
// directory.
func (w *Warden) pathChecker(top []string) func(rel string) string {
	seen := map[string]*seenDir{}
	root := &seenDir{}
	if top != nil {
		root.view = pathView{through: w.paths}
		for _, k := range top {
			root.view = w.step(root.view, k)
		}
		if why, onTheWay := root.view.verdict(); !onTheWay {
			root.why = why
		}
		root.keys = top
		root.rules = w.dirRulesOf(top)
	}
	var dirOf func(dir string) *seenDir
	dirOf = func(dir string) *seenDir {
		if dir == "" {
			return root
		}
		if d, ok := seen[dir]; ok {
			return d
		}
		parent, name := splitLast(dir)
		d := w.enter(dirOf(parent), foldname.Key(name))
		seen[dir] = d
		return d
	}
	return func(rel string) string {
		dir, name := splitLast(rel)
		why, onTheWay, _ := w.entry(dirOf(dir), foldname.Key(name))
		return cmp.Or(why, onTheWay)
	}
}

// enter is what refusedPath finds of the directory whose key is key in
// the directory d.
func (w *Warden) enter(d *seenDir, key string) *seenDir {
	if d.why != "" {
		return d
	}
	e := &seenDir{}
	e.why, e.onTheWay, e.view = w.entry(d, key)
	if d.keys != nil {
		e.keys = append(d.keys[:len(d.keys):len(d.keys)], key)
		e.rules = w.dirRulesOf(e.keys)
	}
	return e
}

// entry says why the entry whose key is key in the directory d is
// refused: as d is, as an outside name, by d's directories' rules, or by
// the path rules and named directories, whose view of it is returned. On
// the way to a protected path only a directory may be, as for the
// sandbox: onTheWay says why a file may not.
func (w *Warden) entry(d *seenDir, key string) (why, onTheWay string, view pathView) {
	if d.why != "" {
		return d.why, "", d.view
	}
	if why := w.outsideWhy(key); why != "" {
		return why, "", view
	}
	for _, r := range d.rules {
		if r.refuses(key) {
			return r.Why, "", view
		}
	}
	view = w.step(d.view, key)
	why, on := view.verdict()
	if on {
		return "", why, view
	}
	return why, "", view
}

// dirRulesOf are the directories' rules whose directory's path has the
// keys keys.
func (w *Warden) dirRulesOf(keys []string) []dirRule {
	var out []dirRule
	for _, r := range w.dirs {
		if len(r.keys) == len(keys) && sameKeys(r.keys, keys) {
			out = append(out, r)
		}
	}
	return out
}

// splitLast splits a path an index lists at its last separator (a slash,
// or a backslash, which separates on a file system bound from Windows).
func splitLast(p string) (dir, name string) {
	i := strings.LastIndexAny(p, `/\`)
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// CheckIndex checks data, an index of the object format whose hashes are
// hashSize bytes, as the warden checks one renamed into place, for a
// program outside a session (adopt) that carries it into the working tree
// worktree: read as git will read it (a split index with its shared index,
// read by name), every path git's, and none holding an outside name or a
// name refused in a directory of its name (the rules that need no
// session's plan) unless the file there holds that very entry. It returns
// what was read.
func CheckIndex(data []byte, hashSize int, read func(name string) ([]byte, error), worktree string, outside []namerule.Outside, inNamed []namerule.InNamedDir) (*gitindex.Index, error) {
	w := &Warden{outside: outside, inNamed: inNamedDirs(inNamed)}
	w.keyOutside()
	ix, err := readIndex(data, hashSize, false, read)
	if err != nil {
		return nil, err
	}
	check := w.pathChecker(nil)
	return ix, ix.Verify(func(e gitindex.Entry) string {
		why := check(e.Path)
		if why == "" || worktreeHolds(worktree, e, hashSize) {
			return ""
		}
		return why
	})
}

// worktreeHolds is fileHolds for a working tree outside: the file at e's
// path beneath dir, no link followed.
func worktreeHolds(dir string, e gitindex.Entry, hashSize int) bool {
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(root)
	return fileIs(root, e.Path, unix.RESOLVE_BENEATH, e, hashSize)
}
