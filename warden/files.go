package warden

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The operations on names, carried out for the task through the warden's
// walk (resolve.go) after the rules' checks (rules.go): make a directory or
// node, a symbolic or hard link, rename, open, truncate.

func (w *Warden) makeNode(t *task, wk *walker, start int, path string, req request) unix.Errno {
	r, err := wk.walk(start, path, false)
	if err != nil {
		return errnoOf(err)
	}
	defer r.close()
	// An outside name spelled as it is that exists is answered as the
	// kernel answers, with nothing made: Mercurial makes its .hg before
	// each write to the repository and expects EEXIST. Another spelling
	// is refused whether or not it exists (a case-folding file system
	// finds ".Git" wherever ".git" is).
	var st unix.Stat_t
	if r.dir >= 0 && w.isOutsideName(r.name) && unix.Fstatat(r.dir, r.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return unix.EEXIST
	}
	if req.op == opMkdir {
		if inStore, e := w.toGitStore(r, true); e != 0 || inStore {
			if e == 0 {
				_, e = w.makeInGitStore(t, r, true, 0, req.mode)
			}
			return e
		}
	}
	if e := w.checkMake(r, req.op == opMkdir); e != 0 {
		return e
	}
	if e := setUmask(t); e != 0 {
		return e
	}
	if req.op == opMkdir {
		err = unix.Mkdirat(r.dir, r.name, req.mode)
	} else {
		err = unix.Mknodat(r.dir, r.name, req.mode, int(req.dev))
	}
	return errnoOf(err)
}

func (w *Warden) symlink(wk *walker, start int, path, target string) unix.Errno {
	r, err := wk.walk(start, path, false)
	if err != nil {
		return errnoOf(err)
	}
	defer r.close()
	if e := w.check(r); e != 0 {
		return e
	}
	return errnoOf(unix.Symlinkat(target, r.dir, r.name))
}

// link makes a hard link. The existing file is resolved to a descriptor and
// linked through the warden's own /proc/self/fd, the way an unprivileged
// process links a file it holds open.
func (w *Warden) link(wk *walker, start2 int, path2 string, start int, path string, req request) unix.Errno {
	if req.flags&^uint64(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return unix.EINVAL
	}
	var old int
	from, err := wk.walk(start2, path2, req.flags&unix.AT_SYMLINK_FOLLOW != 0)
	if err != nil {
		return errnoOf(err)
	}
	defer from.close()
	// A second name for a ruled file, or an index, could be opened for
	// writing.
	if e := w.checkRule(from); e != 0 {
		return e
	}
	if why, e := w.refuseIndex(from); e != 0 {
		w.refused(w.pathOf(from), why)
		return e
	}
	if from.file >= 0 {
		old = from.file
	} else {
		if old, err = unix.Openat(from.dir, from.name, pathFlags, 0); err != nil {
			return errnoOf(err)
		}
		defer unix.Close(old)
		if e := w.copyFD(from, old); e != 0 {
			return e
		}
	}
	to, err := wk.walk(start, path, false)
	if err != nil {
		return errnoOf(err)
	}
	defer to.close()
	if e := w.check(to); e != 0 {
		return e
	}
	return errnoOf(unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", old), to.dir, to.name, unix.AT_SYMLINK_FOLLOW))
}

func (w *Warden) rename(wk *walker, start2 int, path2 string, start int, path string, req request) unix.Errno {
	from, err := wk.walk(start2, path2, false)
	if err != nil {
		return errnoOf(err)
	}
	defer from.close()
	to, err := wk.walk(start, path, false)
	if err != nil {
		return errnoOf(err)
	}
	defer to.close()
	if carried, e := w.renameIndex(from, to, req.flags); carried {
		return e
	}
	if e := w.check(to); e != 0 {
		return e
	}
	if req.flags&unix.RENAME_EXCHANGE != 0 {
		// An exchange gives the old name a new file as well.
		if e := w.check(from); e != 0 {
			return e
		}
	} else if e := w.checkRule(from); e != 0 {
		// A ruled name moved away could be written under its new one.
		return e
	}
	if req.flags == 0 && to.dir >= 0 {
		var st unix.Stat_t
		if unix.Fstat(to.dir, &st) == nil && w.isCopy(fileID{st.Dev, st.Ino}, to.dir, to.name) {
			return w.copyInto(from, to)
		}
	}
	// The kernel refuses to rename a mount point only in the caller's own
	// mount namespace; in another one it dissolves the mount. The sandbox's
	// read-only binds are mounts of its namespace, not the warden's: the
	// warden refuses as the kernel would for the task. The sandbox can make
	// no mounts, so what is a mount point now stays one.
	for _, r := range []resolved{from, to} {
		if mounted, err := mountPoint(r); err != nil {
			return errnoOf(err)
		} else if mounted {
			return unix.EBUSY
		}
	}
	return errnoOf(unix.Renameat2(from.dir, from.name, to.dir, to.name, uint(req.flags)))
}

// The terminals an open treats apart (openSpecial).
const (
	ttyMajor     = 5 // /dev/tty is 5:0, /dev/console 5:1
	ttyMinor     = 0
	consoleMinor = 1
)

// open carries out an open that would make a name or write a file; the
// rest never reach the warden.
func (w *Warden) open(t *task, wk *walker, start int, path string, req request) (int, unix.Errno) {
	flags := int(req.flags)
	follow := flags&(unix.O_NOFOLLOW|unix.O_EXCL) == 0
	for attempt := 0; ; attempt++ {
		fd, errno := w.openOnce(t, wk, start, path, flags, req.mode, follow)
		// A name that became a link after the walk looked at it: walk again.
		if errno == unix.ELOOP && follow && attempt < 3 {
			wk.links = 0
			continue
		}
		return fd, errno
	}
}

// openOnce walks to the name an open means and checks it, then opens it.
func (w *Warden) openOnce(t *task, wk *walker, start int, path string, flags int, mode uint32, follow bool) (int, unix.Errno) {
	r, err := wk.walk(start, path, follow)
	if err != nil {
		return -1, errnoOf(err)
	}
	defer r.close()
	tmpfile := flags&unix.O_TMPFILE == unix.O_TMPFILE
	if strings.HasSuffix(path, "/") && !tmpfile {
		return -1, unix.EISDIR
	}
	if !tmpfile && flags&unix.O_CREAT != 0 {
		if inStore, e := w.toGitStore(r, false); e != 0 {
			return -1, e
		} else if inStore {
			return w.makeInGitStore(t, r, false, flags|unix.O_NOCTTY|unix.O_CLOEXEC, mode)
		}
	}
	// An unnamed file makes no name in its directory; linking it later
	// does, and is checked then.
	if !tmpfile {
		if e := w.check(r); e != 0 {
			return -1, e
		}
	}
	// Never the warden's own controlling terminal, and never blocking the
	// warden on a FIFO's other end.
	flags |= unix.O_NOCTTY | unix.O_CLOEXEC
	if r.file >= 0 {
		return w.openHeld(t, r, flags)
	}
	return w.openNamed(t, r, flags, mode)
}

// openHeld opens the file the walk holds (r.file: a process's fd/N led to
// it) through the warden's own descriptor of it.
func (w *Warden) openHeld(t *task, r resolved, flags int) (int, unix.Errno) {
	var st unix.Stat_t
	if unix.Fstat(r.file, &st) == nil {
		if fd, errno, special := w.openSpecial(t, r, &st, flags); special {
			return fd, errno
		}
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", r.file), flags&^(unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW), 0)
	return fd, errnoOf(err)
}

// openNamed opens the file named r.name in r.dir, or makes it.
func (w *Warden) openNamed(t *task, r resolved, flags int, mode uint32) (int, unix.Errno) {
	var st unix.Stat_t
	statErr := unix.Fstatat(r.dir, r.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if w.copyName(r) {
		return w.openCopy(r, flags, statErr)
	}
	if statErr == nil {
		if fd, errno, special := w.openSpecial(t, r, &st, flags); special {
			return fd, errno
		}
	}
	if statErr == nil && flags&unix.O_EXCL == 0 {
		// An existing file is opened, not made: no umask to read. If it is
		// gone meanwhile, it is made below, as the kernel would.
		fd, err := unix.Openat(r.dir, r.name, flags&^unix.O_CREAT|unix.O_NOFOLLOW, 0)
		if err != unix.ENOENT {
			return fd, errnoOf(err)
		}
	}
	if e := setUmask(t); e != 0 {
		return -1, e
	}
	fd, err := unix.Openat(r.dir, r.name, flags|unix.O_NOFOLLOW, mode)
	return fd, errnoOf(err)
}

// openSpecial opens an existing file (st) that no open may reach as it
// would any other: /dev/tty, which means the task's terminal; /dev/console,
// refused; a FIFO, whose open may wait for its other end. special is false
// for any other file.
func (w *Warden) openSpecial(t *task, r resolved, st *unix.Stat_t, flags int) (fd int, errno unix.Errno, special bool) {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		if unix.Major(st.Rdev) == ttyMajor && unix.Minor(st.Rdev) == ttyMinor {
			fd, errno = t.openCtty(flags)
			return fd, errno, true
		}
		if unix.Major(st.Rdev) == ttyMajor && unix.Minor(st.Rdev) == consoleMinor {
			return -1, unix.EACCES, true
		}
	case unix.S_IFIFO:
		fd, errno = w.openFIFO(t, r, flags)
		return fd, errno, true
	}
	return -1, 0, false
}

// openCtty opens the task's controlling terminal, which is what /dev/tty
// means to the task (opened by the warden, /dev/tty would be the
// launcher's terminal). The terminal is reached through a descriptor of the
// task's that refers to it.
func (t *task) openCtty(flags int) (int, unix.Errno) {
	tty, err := t.ctty()
	if err != nil {
		return -1, errnoOf(err)
	}
	if tty == 0 {
		return -1, unix.ENXIO
	}
	dir := fmt.Sprintf("/proc/%d/fd", t.tid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return -1, errnoOf(err)
	}
	for _, e := range entries {
		var st unix.Stat_t
		p := dir + "/" + e.Name()
		if unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == tty {
			fd, err := unix.Open(p, flags&^(unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_TRUNC), 0)
			return fd, errnoOf(err)
		}
	}
	return -1, unix.ENXIO
}

// openFIFO opens an existing FIFO without ever blocking a worker for good:
// the open waits for the other end as the task's would, but gives up when
// the task is gone, after waking itself by opening the FIFO both ways.
func (w *Warden) openFIFO(t *task, r resolved, flags int) (int, unix.Errno) {
	var fifo int
	var err error
	if r.file >= 0 {
		fifo, err = dup(r.file)
	} else {
		fifo, err = unix.Openat(r.dir, r.name, pathFlags, 0)
	}
	if err != nil {
		return -1, errnoOf(err)
	}
	defer unix.Close(fifo)
	path := fmt.Sprintf("/proc/self/fd/%d", fifo)
	flags &^= unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_TRUNC
	if flags&unix.O_NONBLOCK != 0 {
		fd, err := unix.Open(path, flags, 0)
		return fd, errnoOf(err)
	}
	fd, err := w.blocking(t, func() (int, error) { return unix.Open(path, flags, 0) }, func() {
		// Opened both ways, a FIFO never blocks, and the waiting open
		// returns.
		if wake, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(wake)
		}
	})
	if err == nil && !valid(w.listener, t.id) {
		unix.Close(fd)
		return -1, unix.ENOENT
	}
	return fd, errnoOf(err)
}

// setUmask gives the worker's thread the task's umask, so the kernel
// applies it exactly as for the task (default ACLs included).
func setUmask(t *task) unix.Errno {
	u, err := t.umask()
	if err != nil {
		return errnoOf(err)
	}
	unix.Umask(int(u))
	return 0
}

// mountPoint reports whether r names the root of a mount: its mount differs
// from its directory's. A name that does not exist is none.
func mountPoint(r resolved) (bool, error) {
	var dir, f unix.Statx_t
	if err := unix.Statx(r.dir, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &dir); err != nil {
		return false, err
	}
	err := unix.Statx(r.dir, r.name, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &f)
	if err == unix.ENOENT {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return f.Mnt_id != dir.Mnt_id, nil
}

// truncate cuts a file to length through a descriptor of its own, after the
// same checks as an open for writing.
func (w *Warden) truncate(wk *walker, start int, path string, length int64) unix.Errno {
	r, err := wk.walk(start, path, true)
	if err != nil {
		return errnoOf(err)
	}
	defer r.close()
	if e := w.check(r); e != 0 {
		return e
	}
	var fd int
	if r.file >= 0 {
		fd, err = unix.Open(fmt.Sprintf("/proc/self/fd/%d", r.file), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	} else {
		var st unix.Stat_t
		if err := unix.Fstatat(r.dir, r.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return errnoOf(err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
		case unix.S_IFDIR:
			return unix.EISDIR
		default:
			return unix.EINVAL
		}
		fd, err = unix.Openat(r.dir, r.name, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(fd)
	if e := w.copyFD(r, fd); e != 0 {
		return e
	}
	return errnoOf(unix.Ftruncate(fd, length))
}
