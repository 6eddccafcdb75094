package main

import "golang.org/x/sys/unix"

var legacyCalls = map[int]func(a [6]uint64) call{
	unix.SYS_RENAMEAT: func(a [6]uint64) call {
		return call{op: "rename", dirfd2: int32(a[0]), path2: a[1], dirfd: int32(a[2]), path: a[3]}
	},
}
