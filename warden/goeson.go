package warden

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/mountinfo"

	"golang.org/x/sys/unix"
)

// Calls the warden lets go on (ADR 0040). Where init's Landlock domain
// grants the sandbox's own file systems (LockFiles, Rules.Locked), a call
// that makes one name or writes one file there is answered
// SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel carries it out for the task,
// with the task's own umask, terminal and waits. The warden's look at the
// path is then only a guess at where the kernel will land: a thread of the
// task may change the path, or a link on it, or a descriptor it starts
// from, after the look. What makes the guess safe is the domain: the
// kernel refuses (EACCES) the call anywhere but beneath the locked file
// systems, where no rule of the warden's applies (lockedWithoutRules).
// A wrong guess costs the task a refusal it raced for, never a name the
// warden would have refused.
//
// Calls on two names (rename, link) and symbolic links are carried out as
// before: the warden keeps its record of the sandbox's sockets and of its
// mount points in step with them (holdingNames, rename).

// goesOn reports whether c, read from the task, may go on in the kernel:
// the file system it lands on is locked. It says where the call lands as
// the warden's look found it (the counts, Breakdown).
func (w *Warden) goesOn(c *fileCall, wk *walker) (bool, landing) {
	if len(w.locked) == 0 {
		return false, landUnlooked
	}
	if c.start < 0 && (c.req.op == opOpen || c.req.op == opTruncate) && w.fixedNames[c.path] {
		return true, landLocked
	}
	follow := false
	switch c.req.op {
	case opOpen:
		follow = c.req.flags&(unix.O_NOFOLLOW|unix.O_EXCL) == 0
	case opTruncate:
		follow = true
	case opMkdir, opMknod:
	default:
		return false, landUnlooked
	}
	// A walker of its own: the links it follows and the names of /proc it
	// passes are not counted against the walk that carries the call out.
	peek := *wk
	r, err := peek.walk(c.start, c.path, follow)
	if err != nil {
		return false, landUnlooked
	}
	defer r.close()
	var st unix.Stat_t
	if r.dir >= 0 {
		// The directory that holds the name: Landlock grants a directory
		// with what lies beneath it.
		if unix.Fstat(r.dir, &st) != nil {
			return false, landUnlooked
		}
		return w.locked[st.Dev], w.landingOf(st.Dev)
	}
	// A file reached through a process's fd/N: the kernel opens the file
	// itself, which must lie on a locked file system.
	if unix.Fstat(r.file, &st) != nil {
		return false, landUnlooked
	}
	kind := st.Mode & unix.S_IFMT
	return (kind == unix.S_IFREG || kind == unix.S_IFDIR) && w.locked[st.Dev], w.landingOf(st.Dev)
}

func (w *Warden) landingOf(dev uint64) landing {
	switch {
	case w.locked[dev]:
		return landLocked
	case w.private[dev]:
		return landPrivate
	}
	return landShared
}

// lockedWithoutRules keeps of devs, the file systems the sandbox's domain
// grants, those where no rule of the warden's applies, and says why it
// keeps none: the rules are checked on every other file system only, but a
// directory's names, a copy bound through the git store and a git directory
// the launch found are refused wherever they are. A call that went on in
// the kernel could write them; the domain grants every one of the devs, so
// one rule on any of them stops every call from going on.
func (w *Warden) lockedWithoutRules(devs []uint64) (map[uint64]bool, string) {
	locked := map[uint64]bool{}
	for _, d := range devs {
		locked[d] = true
	}
	var ruled []fileID
	for id := range w.dirs {
		ruled = append(ruled, id)
	}
	for id := range w.copies {
		ruled = append(ruled, id)
	}
	for id := range w.gitDirs {
		ruled = append(ruled, id)
	}
	for _, id := range ruled {
		if locked[id.dev] {
			return nil, fmt.Sprintf("a rule of the warden's is on device %d, which the sandbox's Landlock domain grants: every call is carried out", id.dev)
		}
	}
	return locked, ""
}

// fixedNames are the absolute paths inside that name a device file bound
// directly in a locked file system, itself mounted directly on the root
// (bwrap's /dev/null, /dev/tty, /dev/zero ...): every component of such a
// path is a mount point, which the sandbox can neither rename, remove nor
// cover, so the path names that device for the whole session, and a call
// on it needs no walk to be let go on. The kernel's domain holds it
// whatever the task swaps in (goesOn). mounts are the sandbox's
// (/proc/TID/mountinfo of a task's), root its root directory.
func fixedNames(mounts []mountinfo.Mount, locked map[uint64]bool, root int) map[string]bool {
	top := map[string]mountinfo.Mount{} // the mount seen at each point
	for _, m := range mounts {
		top[m.Point] = m
	}
	fixed := map[string]bool{}
	for point, m := range top {
		dir, ok := top[filepath.Dir(point)]
		if point == "/" || !ok || dir.ID != m.Parent || !lockedMount(dir, locked) {
			continue
		}
		if up, ok := top[filepath.Dir(dir.Point)]; !ok || up.ID != dir.Parent || up.Point != "/" {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(root, strings.TrimPrefix(point, "/"), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR {
			fixed[point] = true
		}
	}
	return fixed
}

// lockedMount reports whether m is a mount of a locked file system.
func lockedMount(m mountinfo.Mount, locked map[uint64]bool) bool {
	var major, minor uint32
	if _, err := fmt.Sscanf(m.Dev, "%d:%d", &major, &minor); err != nil {
		return false
	}
	return locked[unix.Mkdev(major, minor)]
}
