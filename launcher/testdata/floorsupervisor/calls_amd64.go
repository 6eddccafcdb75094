package main

import "golang.org/x/sys/unix"

var legacyCalls = map[int]func(a [6]uint64) call{
	unix.SYS_OPEN: func(a [6]uint64) call {
		return call{op: "open", dirfd: cwd, path: a[0], flags: int(a[1]), mode: uint32(a[2])}
	},
	unix.SYS_CREAT: func(a [6]uint64) call {
		return call{op: "open", dirfd: cwd, path: a[0], flags: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC, mode: uint32(a[1])}
	},
	unix.SYS_MKDIR: func(a [6]uint64) call {
		return call{op: "mkdir", dirfd: cwd, path: a[0], mode: uint32(a[1])}
	},
	unix.SYS_MKNOD: func(a [6]uint64) call {
		return call{op: "mknod", dirfd: cwd, path: a[0], mode: uint32(a[1]), dev: a[2]}
	},
	unix.SYS_SYMLINK: func(a [6]uint64) call {
		return call{op: "symlink", target: a[0], dirfd: cwd, path: a[1]}
	},
	unix.SYS_LINK: func(a [6]uint64) call {
		return call{op: "link", dirfd2: cwd, path2: a[0], dirfd: cwd, path: a[1]}
	},
	unix.SYS_RENAME: func(a [6]uint64) call {
		return call{op: "rename", dirfd2: cwd, path2: a[0], dirfd: cwd, path: a[1]}
	},
	unix.SYS_RENAMEAT: func(a [6]uint64) call {
		return call{op: "rename", dirfd2: int32(a[0]), path2: a[1], dirfd: int32(a[2]), path: a[3]}
	},
}
