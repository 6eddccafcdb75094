package warden

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
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
// the file system it lands on is locked. It says where the call lands, as
// far as the warden looked (the counts, Breakdown). A first look, which
// makes no walk, sends every call that cannot be seen to land on a locked
// file system to be carried out, so a call in the workspace pays for no
// second walk; only one that may land there is walked to its target.
func (w *Warden) goesOn(c *fileCall, wk *walker) (bool, landing) {
	if c.start < 0 && (c.req.op == opOpen || c.req.op == opTruncate) && w.fixedNames[c.path] {
		return true, landLocked
	}
	// A process's links in /proc lead anywhere: a path through them is
	// walked.
	first := w.firstLook(c)
	if first != landLocked && (first == landUnlooked || !strings.HasPrefix(c.path, "/proc/")) {
		return false, first
	}
	return w.walkedLocked(c, wk, first)
}

// walkedLocked walks c's path to its target, as the call would, and
// reports whether that lies on a locked file system, and where it lands
// (first, the first look's, if the walk cannot tell).
func (w *Warden) walkedLocked(c *fileCall, wk *walker, first landing) (bool, landing) {
	follow := false
	switch c.req.op {
	case opOpen:
		follow = c.req.flags&(unix.O_NOFOLLOW|unix.O_EXCL) == 0
	case opTruncate:
		follow = true
	case opMkdir, opMknod:
	default:
		return false, first
	}
	// A walker of its own: the links it follows and the names of /proc it
	// passes are not counted against the walk that carries the call out.
	peek := *wk
	r, err := peek.walk(c.start, c.path, follow)
	if err != nil {
		return false, first
	}
	defer r.close()
	var st unix.Stat_t
	if r.dir >= 0 {
		// The directory that holds the name: Landlock grants a directory
		// with what lies beneath it.
		if unix.Fstat(r.dir, &st) != nil {
			return false, first
		}
		return w.locked[st.Dev], w.landingOf(st.Dev)
	}
	// A file reached through a process's fd/N: the kernel opens the file
	// itself, which must lie on a locked file system.
	if unix.Fstat(r.file, &st) != nil {
		return false, first
	}
	kind := st.Mode & unix.S_IFMT
	return (kind == unix.S_IFREG || kind == unix.S_IFDIR) && w.locked[st.Dev], w.landingOf(st.Dev)
}

// firstLook is where c seems to land, without a walk: for a relative path
// the file system of the directory it starts from, for an absolute one
// that of the mount point the path's text lies below. A link on the way
// can lead elsewhere: a call that seems to land on a locked file system is
// walked to its target before it goes on (goesOn), and one that seems to
// land elsewhere is carried out, wherever it lands.
func (w *Warden) firstLook(c *fileCall) landing {
	if len(w.locked) == 0 {
		return landUnlooked
	}
	if c.start >= 0 {
		var st unix.Stat_t
		if unix.Fstat(c.start, &st) != nil {
			return landUnlooked
		}
		return w.landingOf(st.Dev)
	}
	for _, m := range w.mountPoints {
		if c.path == m.point || strings.HasPrefix(c.path, m.point+"/") || m.point == "/" {
			return w.landingOf(m.dev)
		}
	}
	return landUnlooked
}

func (w *Warden) landingOf(dev uint64) landing {
	switch {
	case w.locked[dev]:
		return landLocked
	case w.private[dev]:
		return landPrivate
	case dev == w.workspaceDev:
		return landWorkspace
	}
	return landShared
}

// A seenMount is where a file system is seen inside, by its device.
type seenMount struct {
	point string
	dev   uint64
}

// mountPointsOf are the sandbox's mount points, each with the file system
// seen there, the longest first: the first whose point a path lies below
// is the mount the path's text leads to.
func mountPointsOf(mounts []mountinfo.Mount) []seenMount {
	v := visibleMounts(mounts)
	var out []seenMount
	for p, m := range v.top {
		if dev, ok := deviceOf(m); ok && v.seen(m) {
			out = append(out, seenMount{p, dev})
		}
	}
	slices.SortFunc(out, func(a, b seenMount) int { return cmp.Compare(len(b.point), len(a.point)) })
	return out
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
// directly in a locked file system (bwrap's /dev/null, /dev/tty, /dev/zero
// in its /dev) whose every leading directory is a mount point too: every
// component of such a path is a mount point, which the sandbox can neither
// rename, remove nor cover, so the path names that device for the whole
// session, and a call on it needs no walk to be let go on. The kernel's
// domain holds it whatever the task swaps in (goesOn). mounts are the
// sandbox's (/proc/TID/mountinfo of a task's); stat looks at a path inside
// without following a link.
func fixedNames(mounts []mountinfo.Mount, locked map[uint64]bool, stat func(string) (unix.Stat_t, error)) map[string]bool {
	v := visibleMounts(mounts)
	fixed := map[string]bool{}
	for point, m := range v.top {
		parent, ok := v.byID[m.Parent]
		if point == "/" || !v.seen(m) || !ok || parent.Point != filepath.Dir(point) || !lockedMount(parent, locked) {
			continue
		}
		leading := true
		for dir := parent.Point; dir != "/"; dir = filepath.Dir(dir) {
			_, isMount := v.top[dir]
			leading = leading && isMount
		}
		if !leading {
			continue
		}
		if st, err := stat(point); err == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR {
			fixed[point] = true
		}
	}
	return fixed
}

// visible is a table of mounts by point and by ID.
type visible struct {
	top  map[string]mountinfo.Mount // the last mounted at each point
	byID map[int]mountinfo.Mount
}

func visibleMounts(mounts []mountinfo.Mount) visible {
	v := visible{top: map[string]mountinfo.Mount{}, byID: map[int]mountinfo.Mount{}}
	for _, m := range mounts {
		v.top[m.Point] = m
		v.byID[m.ID] = m
	}
	return v
}

// seen reports whether m is seen inside: the last mounted at its point,
// on a mount seen, up to the root. A mount covered by another (the host's
// /dev/shm under bwrap's /dev) is not.
func (v visible) seen(m mountinfo.Mount) bool {
	for range len(v.byID) {
		if v.top[m.Point].ID != m.ID {
			// Stacked at its point: seen if it is what the one on top
			// was mounted on, and so on up.
			return false
		}
		if m.Point == "/" {
			return true
		}
		parent, ok := v.byID[m.Parent]
		if !ok {
			return false
		}
		for parent.Point == m.Point {
			// bwrap's /dev is mounted on the /dev the root bind brought.
			next, ok := v.byID[parent.Parent]
			if !ok {
				return false
			}
			parent = next
		}
		m = parent
	}
	return false
}

// lockedMount reports whether m is a mount of a locked file system.
func lockedMount(m mountinfo.Mount, locked map[uint64]bool) bool {
	dev, ok := deviceOf(m)
	return ok && locked[dev]
}

// deviceOf is the device number of m's file system.
func deviceOf(m mountinfo.Mount) (uint64, bool) {
	var major, minor uint32
	if _, err := fmt.Sscanf(m.Dev, "%d:%d", &major, &minor); err != nil {
		return 0, false
	}
	return unix.Mkdev(major, minor), true
}
