package warden

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/mountinfo"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Landlock in the sandbox: the two domains init puts it in, the scope on
// abstract unix sockets (ADR 0024) and the lock on its files (ADR 0040),
// and the kernel's ABI, which says whether each can be had.

// LandlockABI is the Landlock ABI version of the running kernel, 0 without
// Landlock.
func LandlockABI() int {
	abi, _ := Landlock()
	return abi
}

// Landlock is the Landlock ABI version of the running kernel and, when it
// has none, why: the kernel's answer tells a kernel built without Landlock
// (ENOSYS) from one that has it switched off at boot (EOPNOTSUPP).
func Landlock() (abi int, why string) {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case err == nil:
		return v, fmt.Sprintf("the kernel has Landlock ABI %d", v)
	case errors.Is(err, unix.ENOSYS):
		return 0, "the kernel is built without Landlock (ENOSYS)"
	case errors.Is(err, unix.EOPNOTSUPP):
		return 0, "the kernel has Landlock switched off (EOPNOTSUPP: landlock is not in its lsm= boot parameter)"
	}
	return 0, fmt.Sprintf("the kernel answers landlock_create_ruleset with %v", err)
}

// The scope on abstract unix sockets (ADR 0024): init puts the sandbox in
// a domain that reaches only the abstract unix sockets made inside it, so
// while it shares the container's abstract names (network = open), the
// socket helper's connects and sends, made in that domain, reach no
// other.

// ScopeABI is the first Landlock ABI that can scope abstract unix sockets
// (Linux 6.12).
const ScopeABI = 6

// ScopeAbstractSockets puts the calling thread, and every process it starts
// from now on, in a Landlock domain of its own that reaches only the
// abstract unix sockets made inside it. The thread needs no_new_privs.
func ScopeAbstractSockets() error {
	if abi, why := Landlock(); abi < ScopeABI {
		return fmt.Errorf("scoping abstract unix sockets needs Landlock ABI %d (Linux 6.12), and %s", ScopeABI, why)
	}
	cfg, err := landlock.NewConfig(landlock.ScopedSet(ll.ScopeAbstractUnixSocket))
	if err != nil {
		return err
	}
	fd, flags, err := cfg.NewRulesetFD()
	if err != nil {
		return fmt.Errorf("cannot make the Landlock ruleset scoping abstract unix sockets: %w", err)
	}
	defer unix.Close(fd)
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// The kernel's lock on the sandbox's files (ADR 0040). init puts the
// sandbox in a Landlock domain that lets it make a name, or open or
// truncate a file for writing, only beneath the sandbox's own file systems
// that nothing from outside is mounted beneath writably: typically its /tmp
// and /dev. The warden lets a call whose every target lies there go on
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE) instead of carrying it out: the kernel
// then reads the task's arguments again, and whatever a thread of the task
// swapped in since the warden looked, the domain refuses it anywhere else
// (EACCES). Everywhere else the warden carries every call out as before.

// LockABI is the first Landlock ABI whose domain refuses every way to make
// a name or write a file that the warden's filter sends to it: truncate(2)
// by path needs LANDLOCK_ACCESS_FS_TRUNCATE (ABI 3, Linux 6.2).
const LockABI = 3

// lockedAccess are the rights the domain handles: those of a call the
// warden's filter sends to the warden (filter.go) that make or write a
// name. Removing (unlink, rmdir) is not among them: the filter lets it
// through everywhere, and the domain must not refuse what the warden never
// decided. Reading and executing are not either: the sandbox reads the
// whole container. REFER is handled so that a rename or link between
// directories is allowed only between the locked ones.
const lockedAccess = landlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSRefer |
	ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock |
	ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym)

// LockFiles puts the calling thread, and every process it starts from now
// on, in a Landlock domain where a name may be made, and a file opened or
// truncated for writing, only beneath those of the sandbox's own file
// systems (private, their mount points) that lockable says hold nothing
// from outside the sandbox writably (see lockable). It returns those
// directories, or none and why when the kernel cannot lock them: the
// warden then carries out every call, as without the lock.
//
// The caller holds its OS thread until it execs: a Landlock domain belongs
// to the thread that enforces it. The thread needs no_new_privs (bwrap
// sets it).
func LockFiles(private []string) (locked []string, why string, err error) {
	if abi, kernel := Landlock(); abi < LockABI {
		return nil, fmt.Sprintf("the kernel's lock on files needs Landlock ABI %d (Linux 6.2), and %s", LockABI, kernel), nil
	}
	mounts, err := mountinfo.Read("self")
	if err != nil {
		return nil, "", fmt.Errorf("cannot read the sandbox's mounts: %w", err)
	}
	var notLocked []string
	for _, dir := range private {
		if whyNot := lockable(mounts, private, dir, lstat); whyNot != "" {
			notLocked = append(notLocked, dir+" ("+whyNot+")")
			continue
		}
		locked = append(locked, dir)
	}
	if len(locked) == 0 {
		return nil, "no file system of the sandbox's own can be locked: " + strings.Join(notLocked, "; "), nil
	}
	cfg, err := landlock.NewConfig(lockedAccess)
	if err != nil {
		return nil, "", err
	}
	fd, flags, err := cfg.NewRulesetFD(landlock.PathAccess(lockedAccess, locked...))
	if err != nil {
		return nil, "", fmt.Errorf("cannot make the Landlock ruleset for %s: %w", strings.Join(locked, ", "), err)
	}
	defer unix.Close(fd)
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return nil, "", fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if len(notLocked) > 0 {
		return locked, "not locked: " + strings.Join(notLocked, "; "), nil
	}
	return locked, "", nil
}

// lockable says why dir, one of the sandbox's own file systems, cannot be
// granted in the domain, or "" when it can. Landlock grants a directory
// with everything beneath it, the mounts beneath it too: the grant is safe
// only when no mount beneath it lets the sandbox write where the outside
// sees or where the warden keeps a rule. Allowed beneath are read-only
// mounts (the kernel refuses every write through them, and one the outside
// dissolves uncovers the sandbox's own tmpfs), other file systems of the
// sandbox's own, a pseudo-terminal file system, and device files other
// than the console (bwrap's /dev binds /dev/null, /dev/tty and the like:
// writing them is what the warden lets a task do too). The sandbox can
// make no mounts, so what is mounted now stays so for the session.
func lockable(mounts []mountinfo.Mount, private []string, dir string, stat func(string) (unix.Stat_t, error)) string {
	top := -1
	for i, m := range mounts {
		if m.Point == dir {
			top = i // the last one mounted there is the one seen
		}
	}
	if top < 0 {
		return "not a mount point"
	}
	if mounts[top].FSType != "tmpfs" {
		return "its file system is " + mounts[top].FSType + ", not a tmpfs of the sandbox's own"
	}
	beneath := map[int]bool{mounts[top].ID: true}
	for changed := true; changed; {
		changed = false
		for _, m := range mounts {
			if beneath[m.Parent] && !beneath[m.ID] {
				beneath[m.ID], changed = true, true
				if why := mountBeneath(m, private, stat); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

// mountBeneath says why m, mounted beneath a directory to be locked, keeps
// it from being locked, or "".
func mountBeneath(m mountinfo.Mount, private []string, stat func(string) (unix.Stat_t, error)) string {
	switch {
	case m.ReadOnly(), m.FSType == "devpts":
		return ""
	case m.FSType == "tmpfs" && slices.Contains(private, m.Point):
		return ""
	}
	if st, err := stat(m.Point); err == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR &&
		!(unix.Major(st.Rdev) == ttyMajor && unix.Minor(st.Rdev) == consoleMinor) {
		return ""
	}
	return m.Point + " is mounted beneath it writably"
}

func lstat(path string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Lstat(path, &st)
	return st, err
}
