package warden

import "golang.org/x/sys/unix"

const (
	nativeArch = unix.AUDIT_ARCH_X86_64
	x32Bit     = 0x40000000 // x32 calls carry this bit; bwrap's filter refuses them too
)

// x86-64 keeps the calls that predate the *at family.
var legacyCalls = []call{
	notifyWriting("open", unix.SYS_OPEN, 1, "creates a file name with O_CREAT, or writes a file",
		func(a [6]uint64) request {
			return request{op: opOpen, dirfd: atFDCWD, path: a[0], flags: a[1], mode: uint32(a[2])}
		}),
	notify("creat", unix.SYS_CREAT, "creates a file name",
		func(a [6]uint64) request {
			return request{op: opOpen, dirfd: atFDCWD, path: a[0], flags: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC, mode: uint32(a[1])}
		}),
	notify("mkdir", unix.SYS_MKDIR, "creates a directory",
		func(a [6]uint64) request {
			return request{op: opMkdir, dirfd: atFDCWD, path: a[0], mode: uint32(a[1])}
		}),
	notify("mknod", unix.SYS_MKNOD, "creates a file, pipe or device node",
		func(a [6]uint64) request {
			return request{op: opMknod, dirfd: atFDCWD, path: a[0], mode: uint32(a[1]), dev: a[2]}
		}),
	notify("symlink", unix.SYS_SYMLINK, "creates a symbolic link",
		func(a [6]uint64) request {
			return request{op: opSymlink, target: a[0], dirfd: atFDCWD, path: a[1]}
		}),
	notify("link", unix.SYS_LINK, "creates a hard link",
		func(a [6]uint64) request {
			return request{op: opLink, dirfd2: atFDCWD, path2: a[0], dirfd: atFDCWD, path: a[1]}
		}),
	notify("rename", unix.SYS_RENAME, "gives a file a new name",
		func(a [6]uint64) request {
			return request{op: opRename, dirfd2: atFDCWD, path2: a[0], dirfd: atFDCWD, path: a[1]}
		}),
}
