package warden

import (
	"strings"

	"golang.org/x/sys/unix"
)

// A walker resolves a path the way the kernel would for one sandboxed
// task, but one component at a time from descriptors the warden holds. The
// kernel is never asked to follow a symbolic link or a "..": an absolute
// link is followed from the task's root, never from the warden's, so no
// path the sandbox writes can lead outside what the task itself sees.
//
// Two names mean something different to the warden than to the task:
// /proc/self and /proc/thread-self, which the walker rewrites to the task's
// own PID directory; and the links inside a PID directory of /proc (fd/N,
// cwd, root), which the kernel resolves the same for any opener and which
// the walker lets it follow, but only in the task's own PID directory.
type walker struct {
	root  int // O_PATH descriptor of the task's root
	self  func() (tgid, tid string, err error)
	links int
	// viaProc says the walk followed a name /proc means for the asker
	// alone (self, thread-self, a process's fd/N, cwd, root).
	viaProc bool
}

const maxLinks = 40 // the kernel's limit on links followed in one lookup

const pathFlags = unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC

// resolved is where a path leads: the directory that holds its last
// component and that component's name, not looked up again; or, for a path
// that ends at a file only the kernel can find (a process's fd/N in /proc),
// an O_PATH descriptor of that file in file, with dir -1. borrowed says dir
// is the descriptor the walk started from, which its caller keeps.
type resolved struct {
	dir      int
	name     string
	file     int
	borrowed bool
}

func (r resolved) close() {
	if r.dir >= 0 && !r.borrowed {
		unix.Close(r.dir)
	}
	if r.file >= 0 {
		unix.Close(r.file)
	}
}

// walk resolves path from start (a descriptor the caller keeps), or from
// the root for an absolute path: every component but the last, and with
// follow also a last component that is a symbolic link. The last name is
// returned unresolved, so the caller acts on exactly the name it checked:
// "." for a path that ends at a directory ("/", "a/..", a link to "/").
// A path that only descends is resolved by the kernel in one call
// (descend); any other, or one descend cannot decide, a component at a
// time (walkComponents).
func (w *walker) walk(start int, path string, follow bool) (resolved, error) {
	if r, ok := w.descend(start, path, follow); ok {
		return r, nil
	}
	return w.walkComponents(start, path, follow)
}

// descend resolves a path that only descends, from start or the root,
// with one openat2 of its directory: no ".." in its text, no symbolic link
// on the way (RESOLVE_NO_SYMLINKS: the kernel fails with ELOOP at the
// first, /proc's among them), ending at a name; mounts are crossed as the
// walk crosses them. The walk would open the same directories one by one
// and follow nothing (so count no link against the walker's limit): its
// result is the walk's. ok is false wherever that may not hold, and the
// caller walks: a path of one name (nothing to save), "." or ".." as the
// last name, any error (the walk meets it again, and answers as before), a
// directory in /proc (whose names the walk treats apart: self, a
// process's own), and with follow a last name that is a link or cannot be
// looked at.
func (w *walker) descend(start int, path string, follow bool) (resolved, bool) {
	dirPath, name, ok := descent(path)
	if !ok {
		return resolved{}, false
	}
	from := start
	if strings.HasPrefix(path, "/") {
		from = w.root
	}
	dir, err := unix.Openat2(from, dirPath, &descendHow)
	if err != nil {
		return resolved{}, false
	}
	if onProc(dir) || (follow && !plainLast(dir, name)) {
		unix.Close(dir)
		return resolved{}, false
	}
	return resolved{dir: dir, name: name, file: -1}, true
}

var descendHow = unix.OpenHow{
	Flags:   unix.O_PATH | unix.O_CLOEXEC,
	Resolve: unix.RESOLVE_NO_SYMLINKS,
}

// descent splits a path that only descends into its directory (relative,
// without the leading slashes of an absolute path) and its last name; ok
// is false for any other path, and for a path of one name.
func descent(path string) (dir, name string, ok bool) {
	trimmed := strings.TrimRight(path, "/")
	i := strings.LastIndexByte(trimmed, '/')
	if i < 0 {
		return "", "", false
	}
	dir, name = strings.TrimLeft(trimmed[:i], "/"), trimmed[i+1:]
	if dir == "" || name == "." || name == ".." || hasDotDot(dir) {
		return "", "", false
	}
	return dir, name, true
}

// hasDotDot reports whether a component of the slash-separated p is "..".
func hasDotDot(p string) bool {
	for p != "" {
		c, rest, _ := strings.Cut(p, "/")
		if c == ".." {
			return true
		}
		p = rest
	}
	return false
}

// plainLast reports whether name in dir is no symbolic link, or missing
// (to be made): the last name, followed, is then the name itself.
func plainLast(dir int, name string) bool {
	var st unix.Stat_t
	err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return err == unix.ENOENT || (err == nil && st.Mode&unix.S_IFMT != unix.S_IFLNK)
}

// walkComponents is walk one component at a time, for any path.
//
// Complexity: one loop over the components, and one switch over what each
// step found; the cases are the walk's rules, read best side by side.
func (w *walker) walkComponents(start int, path string, follow bool) (resolved, error) {
	if path == "" {
		return resolved{}, unix.ENOENT
	}
	// cur is the directory the walk is in: the start, or the root, which
	// the caller keeps (borrowed), or a descriptor of the walk's own.
	cur, borrowed := start, true
	if strings.HasPrefix(path, "/") {
		cur = w.root
	}
	leave := func() {
		if !borrowed {
			unix.Close(cur)
		}
	}
	fail := func(err error) (resolved, error) {
		leave()
		return resolved{}, err
	}
	procPID := "" // the PID directory of /proc that cur is in, if any
	comps := split(path)
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		last := len(comps) == 0
		// named: c is the last component and a name, not "." or "..":
		// the name the walk returns, unless a link to follow.
		named := last && c != "." && c != ".."
		if named && !follow {
			return w.final(cur, c, borrowed)
		}
		step := w.step
		if named {
			step = w.stepLast
		}
		next, target, kind, err := step(cur, c, &procPID)
		switch {
		case err == unix.ENOENT && named:
			return w.final(cur, c, borrowed) // to be created
		case err != nil:
			return fail(err)
		case kind == isLink:
			if w.links++; w.links > maxLinks {
				return fail(unix.ELOOP)
			}
			comps = append(split(target), comps...)
			if strings.HasPrefix(target, "/") {
				leave()
				cur, borrowed = w.root, true
				procPID = ""
			}
		case last && kind == jumped:
			leave()
			return resolved{dir: -1, file: next}, nil
		case named:
			if next >= 0 {
				unix.Close(next)
			}
			return w.final(cur, c, borrowed)
		default:
			leave()
			cur, borrowed = next, false
		}
	}
	return w.final(cur, ".", borrowed)
}

// stepLast looks up the walk's last component c in cur, as step does, but
// opens nothing for a component that is no link, since the walk returns its
// name, not a descriptor: next is -1 then. The names /proc treats apart go
// through step.
func (w *walker) stepLast(cur int, c string, procPID *string) (next int, target string, kind found, err error) {
	if procNamed(c) {
		return w.step(cur, c, procPID)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(cur, c, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return -1, "", isFile, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return -1, "", isFile, nil
	}
	if onProc(cur) {
		return w.procLink(cur, c, *procPID)
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(cur, c, buf)
	switch {
	case err == unix.EINVAL: // no link any more: the walk returns the name, as for a file
		return -1, "", isFile, nil
	case err != nil:
		return -1, "", isFile, err
	}
	return -1, string(buf[:n]), isLink, nil
}

// final is the walk's result: name in dir, unless dir is in /proc, in
// another process's directory. The warden may write what only the task's
// own PID directory lets the task write (mem, the maps), where the task
// itself may not, for another process: refused, whatever way the walk took.
func (w *walker) final(dir int, name string, borrowed bool) (resolved, error) {
	fail := func(err error) (resolved, error) {
		if !borrowed {
			unix.Close(dir)
		}
		return resolved{}, err
	}
	if onProc(dir) {
		tgid, _, err := w.self()
		if err != nil {
			return fail(err)
		}
		p := strings.TrimPrefix(fdPath(dir)+"/", "/proc/")
		pid, _, _ := strings.Cut(p, "/")
		if isDigits(pid) && pid != tgid {
			return fail(unix.EACCES)
		}
	}
	return resolved{dir: dir, name: name, file: -1, borrowed: borrowed}, nil
}

// What step found.
type found int

const (
	isFile found = iota // a file or directory, opened
	isLink              // a symbolic link, for the walk to follow
	jumped              // a link of /proc the kernel followed
)

// step looks up one component c in the directory cur. It returns either a
// new descriptor for c, or, for a symbolic link to be followed by the
// caller, its target.
func (w *walker) step(cur int, c string, procPID *string) (next int, target string, kind found, err error) {
	switch c {
	case ".":
		next, err = dup(cur)
		return next, "", isFile, err
	case "..":
		next, err = w.parent(cur)
		*procPID = ""
		return next, "", isFile, err
	}
	if procNamed(c) && onProc(cur) && isProcRoot(cur) {
		if c == "self" || c == "thread-self" {
			return w.selfLink(c)
		}
		*procPID = c
	}
	next, err = unix.Openat(cur, c, pathFlags, 0)
	if err != nil {
		return -1, "", isFile, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(next, &st); err != nil {
		unix.Close(next)
		return -1, "", isFile, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return next, "", isFile, nil
	}
	if onProc(cur) {
		unix.Close(next)
		return w.procLink(cur, c, *procPID)
	}
	target, err = readlink(next)
	unix.Close(next)
	if err != nil {
		return -1, "", isFile, err
	}
	return -1, target, isLink, nil
}

// parent opens the directory above cur; the root is its own.
func (w *walker) parent(cur int) (int, error) {
	if same(cur, w.root) {
		return dup(cur)
	}
	return unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// procNamed reports whether c is one of the names the root of /proc treats
// apart: self, thread-self, or a PID.
func procNamed(c string) bool { return c == "self" || c == "thread-self" || isDigits(c) }

// selfLink is what /proc/self or /proc/thread-self (c) means for the task:
// a link to its own PID directory, or to its thread's there.
func (w *walker) selfLink(c string) (int, string, found, error) {
	w.viaProc = true
	tgid, tid, err := w.self()
	if err != nil {
		return -1, "", isFile, err
	}
	if c == "self" {
		return -1, tgid, isLink, nil
	}
	return -1, tgid + "/task/" + tid, isLink, nil
}

// procLink follows a link in /proc. The few plain links there (mounts,
// net) name "self/..." and are followed as text; the others (a process's
// fd/N, cwd, root, exe) lead to the file itself whoever opens them, and are
// followed by the kernel, but only in the task's own PID directory: the
// warden may open what another process holds where the task may not.
func (w *walker) procLink(dir int, c, procPID string) (int, string, found, error) {
	w.viaProc = true
	l, err := unix.Openat(dir, c, pathFlags, 0)
	if err != nil {
		return -1, "", isFile, err
	}
	target, err := readlink(l)
	unix.Close(l)
	if err != nil {
		return -1, "", isFile, err
	}
	if strings.HasPrefix(target, "self/") || strings.HasPrefix(target, "thread-self/") {
		return -1, target, isLink, nil
	}
	tgid, _, err := w.self()
	if err != nil {
		return -1, "", isFile, err
	}
	if procPID != tgid {
		return -1, "", isFile, unix.EACCES
	}
	next, err := unix.Openat(dir, c, unix.O_PATH|unix.O_CLOEXEC, 0)
	return next, "", jumped, err
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func split(path string) []string {
	var out []string
	for _, c := range strings.Split(path, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

func dup(fd int) (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0) }

func readlink(fd int) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// same reports whether two descriptors name the same directory on the same
// mount.
func same(a, b int) bool {
	var sa, sb unix.Statx_t
	const mask = unix.STATX_INO | unix.STATX_MNT_ID
	if unix.Statx(a, "", unix.AT_EMPTY_PATH, mask, &sa) != nil || unix.Statx(b, "", unix.AT_EMPTY_PATH, mask, &sb) != nil {
		return false
	}
	return sa.Ino == sb.Ino && sa.Dev_major == sb.Dev_major && sa.Dev_minor == sb.Dev_minor && sa.Mnt_id == sb.Mnt_id
}

func onProc(fd int) bool {
	var st unix.Statfs_t
	return unix.Fstatfs(fd, &st) == nil && st.Type == unix.PROC_SUPER_MAGIC
}

// isProcRoot reports whether fd is the root of a proc file system, whose
// inode number is always 1.
func isProcRoot(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Ino == 1
}
