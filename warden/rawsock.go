package warden

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawSockCall makes bind or connect with addr exactly as given.
func rawSockCall(nr uintptr, fd int, addr []byte) unix.Errno {
	var p unsafe.Pointer
	if len(addr) > 0 {
		p = unsafe.Pointer(&addr[0])
	}
	_, _, errno := unix.Syscall(nr, uintptr(fd), uintptr(p), uintptr(len(addr)))
	return errno
}

// rawBind binds fd to addr exactly as given. A bind a signal interrupted
// has made nothing (a path's file is unlinked again): it is made again,
// since the signal came to the warden or the helper, whose Go runtimes
// signal their own threads, and not to the task, which would get EINTR from
// no signal of its own.
func rawBind(fd int, addr []byte) unix.Errno {
	for {
		if errno := rawSockCall(unix.SYS_BIND, fd, addr); errno != unix.EINTR {
			return errno
		}
	}
}

// rawSendmsg sends one message, with name and control exactly as given.
func rawSendmsg(fd int, name, data, control []byte, flags int) (int, unix.Errno) {
	var h unix.Msghdr
	if len(name) > 0 {
		h.Name = &name[0]
		h.Namelen = uint32(len(name))
	}
	var iov unix.Iovec
	if len(data) > 0 {
		iov.Base = &data[0]
		iov.SetLen(len(data))
		h.Iov = &iov
		h.SetIovlen(1)
	}
	if len(control) > 0 {
		h.Control = &control[0]
		h.SetControllen(len(control))
	}
	n, _, errno := unix.Syscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&h)), uintptr(flags))
	return int(n), errno
}
