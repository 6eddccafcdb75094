package main

import "golang.org/x/sys/unix"

// A call is a trapped call's arguments, as the floor carries it out: the
// name made (dirfd, path), for link and rename the existing one (dirfd2,
// path2), a symlink's text (target).
type call struct {
	op     string
	dirfd  int32
	path   uint64
	dirfd2 int32
	path2  uint64
	target uint64
	flags  int
	mode   uint32
	dev    uint64
	length int64
}

const cwd = unix.AT_FDCWD

// calls are the warden's trapped calls on names that every architecture
// has (legacyCalls adds the older ones where they exist); any other
// trapped call, a socket's, goes on.
var calls = map[int]func(a [6]uint64) call{
	unix.SYS_OPENAT: func(a [6]uint64) call {
		return call{op: "open", dirfd: int32(a[0]), path: a[1], flags: int(a[2]), mode: uint32(a[3])}
	},
	unix.SYS_MKDIRAT: func(a [6]uint64) call {
		return call{op: "mkdir", dirfd: int32(a[0]), path: a[1], mode: uint32(a[2])}
	},
	unix.SYS_MKNODAT: func(a [6]uint64) call {
		return call{op: "mknod", dirfd: int32(a[0]), path: a[1], mode: uint32(a[2]), dev: a[3]}
	},
	unix.SYS_SYMLINKAT: func(a [6]uint64) call {
		return call{op: "symlink", target: a[0], dirfd: int32(a[1]), path: a[2]}
	},
	unix.SYS_LINKAT: func(a [6]uint64) call {
		return call{op: "link", dirfd2: int32(a[0]), path2: a[1], dirfd: int32(a[2]), path: a[3], flags: int(a[4])}
	},
	unix.SYS_RENAMEAT2: func(a [6]uint64) call {
		return call{op: "rename", dirfd2: int32(a[0]), path2: a[1], dirfd: int32(a[2]), path: a[3], flags: int(a[4])}
	},
	unix.SYS_TRUNCATE: func(a [6]uint64) call {
		return call{op: "truncate", dirfd: cwd, path: a[0], length: int64(a[1])}
	},
}

func init() {
	for nr, decode := range legacyCalls {
		calls[nr] = decode
	}
}
