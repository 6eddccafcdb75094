package main

import "golang.org/x/sys/unix"

var calls = map[int]carried{
	unix.SYS_OPEN:    {dirfd: -1, path: 0, flags: 1, mode: 2},
	unix.SYS_OPENAT:  {dirfd: 0, path: 1, flags: 2, mode: 3},
	unix.SYS_MKDIR:   {dirfd: -1, path: 0, mode: 1, mkdir: true},
	unix.SYS_MKDIRAT: {dirfd: 0, path: 1, mode: 2, mkdir: true},
}
