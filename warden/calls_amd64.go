package warden

import "golang.org/x/sys/unix"

const (
	nativeArch = unix.AUDIT_ARCH_X86_64
	x32Bit     = 0x40000000 // x32 calls carry this bit; bwrap's filter refuses them too
)

// x86-64 keeps the calls that predate the *at family.
var legacyCalls = []call{
	{name: "open", nr: unix.SYS_OPEN, flagsArg: 1, why: "creates a file name with O_CREAT, or writes a file",
		decode: func(a [6]uint64) request {
			return request{op: opOpen, dirfd: atFDCWD, path: a[0], flags: a[1], mode: uint32(a[2])}
		}},
	{name: "creat", nr: unix.SYS_CREAT, flagsArg: -1, why: "creates a file name",
		decode: func(a [6]uint64) request {
			return request{op: opOpen, dirfd: atFDCWD, path: a[0], flags: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC, mode: uint32(a[1])}
		}},
	{name: "mkdir", nr: unix.SYS_MKDIR, flagsArg: -1, why: "creates a directory",
		decode: func(a [6]uint64) request {
			return request{op: opMkdir, dirfd: atFDCWD, path: a[0], mode: uint32(a[1])}
		}},
	{name: "mknod", nr: unix.SYS_MKNOD, flagsArg: -1, why: "creates a file, pipe or device node",
		decode: func(a [6]uint64) request {
			return request{op: opMknod, dirfd: atFDCWD, path: a[0], mode: uint32(a[1]), dev: a[2]}
		}},
	{name: "symlink", nr: unix.SYS_SYMLINK, flagsArg: -1, why: "creates a symbolic link",
		decode: func(a [6]uint64) request {
			return request{op: opSymlink, target: a[0], dirfd: atFDCWD, path: a[1]}
		}},
	{name: "link", nr: unix.SYS_LINK, flagsArg: -1, why: "creates a hard link",
		decode: func(a [6]uint64) request {
			return request{op: opLink, dirfd2: atFDCWD, path2: a[0], dirfd: atFDCWD, path: a[1]}
		}},
	{name: "rename", nr: unix.SYS_RENAME, flagsArg: -1, why: "gives a file a new name",
		decode: func(a [6]uint64) request {
			return request{op: opRename, dirfd2: atFDCWD, path2: a[0], dirfd: atFDCWD, path: a[1]}
		}},
}
