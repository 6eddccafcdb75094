package sandbox

import (
	"os"
	"syscall"
)

// PrivateMounts is how bwrap is started, by the launcher and by doctor's
// probe: in a mount namespace of its own whose mounts receive nothing from
// outside (ADR 0025). bwrap makes the sandbox's mounts slaves of the
// namespace it starts in, so a mount made outside after the launch would
// appear inside with its own flags, writable, under any path the sandbox
// sees, read-only or masked. Go's child unshares the mount namespace and
// marks every mount private (MS_REC|MS_PRIVATE) before it execs bwrap, so
// bwrap copies a tree that nothing propagates into; a mount made before
// that is in the tree bwrap binds and treats like any other. The unshare
// needs CAP_SYS_ADMIN, which a user has only in a user namespace of its own
// (and root in a container often not outside one): the child makes one,
// mapping only the caller's uid and gid, as bwrap's own does. If any of it
// fails, bwrap does not start.
func PrivateMounts() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags:   syscall.CLONE_NEWUSER,
		Unshareflags: syscall.CLONE_NEWNS,
		UidMappings:  []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:  []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
}
