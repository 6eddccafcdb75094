package warden

import (
	"fmt"
	"unsafe"

	"github.com/claude-sandbox/claude-sandbox/internal/seccompbpf"
	"golang.org/x/sys/unix"
)

// The warden's seccomp filter sends every system call that can create a
// name in the file system, open an existing file for writing, or give a
// socket an address (bind, connect, a send with a destination), to the
// launcher, outside the sandbox. It is
// installed inside the sandbox, after bwrap's own filter (sandbox/seccomp.go),
// by the init process just before it runs Claude, and holds for every
// process of the session. The table below is the whole of it: which calls,
// under which argument, and what happens to them.

// A call is one system call the filter names.
type call struct {
	name string
	nr   uintptr
	// flagsArg >= 0 sends the call only when that argument (open's flags)
	// asks to create, truncate or write: an open for reading needs no
	// decision.
	flagsArg int
	// addrArg > 0 sends the call only when that argument (sendto's
	// destination) is not a null pointer: without one the kernel reads no
	// address, whatever the task's memory holds.
	addrArg int
	// errno, when not zero, fails the call outright instead.
	errno unix.Errno
	// decode reads the call's registers into a request; nil with errno.
	decode func(a [6]uint64) request
	why    string
}

const atFDCWD = unix.AT_FDCWD

func fd(a uint64) int { return int(int32(a)) }

// calls common to every architecture; calls_*.go add the older ones that
// only some architectures have.
var commonCalls = []call{
	{name: "openat", nr: unix.SYS_OPENAT, flagsArg: 2, why: "creates a file name with O_CREAT, or writes a file",
		decode: func(a [6]uint64) request {
			return request{op: opOpen, dirfd: fd(a[0]), path: a[1], flags: a[2], mode: uint32(a[3])}
		}},
	{name: "mkdirat", nr: unix.SYS_MKDIRAT, flagsArg: -1, why: "creates a directory",
		decode: func(a [6]uint64) request {
			return request{op: opMkdir, dirfd: fd(a[0]), path: a[1], mode: uint32(a[2])}
		}},
	{name: "mknodat", nr: unix.SYS_MKNODAT, flagsArg: -1, why: "creates a file, pipe or device node",
		decode: func(a [6]uint64) request {
			return request{op: opMknod, dirfd: fd(a[0]), path: a[1], mode: uint32(a[2]), dev: a[3]}
		}},
	{name: "symlinkat", nr: unix.SYS_SYMLINKAT, flagsArg: -1, why: "creates a symbolic link",
		decode: func(a [6]uint64) request {
			return request{op: opSymlink, target: a[0], dirfd: fd(a[1]), path: a[2]}
		}},
	{name: "linkat", nr: unix.SYS_LINKAT, flagsArg: -1, why: "creates a hard link",
		decode: func(a [6]uint64) request {
			return request{op: opLink, dirfd2: fd(a[0]), path2: a[1], dirfd: fd(a[2]), path: a[3], flags: a[4]}
		}},
	{name: "renameat", nr: unix.SYS_RENAMEAT, flagsArg: -1, why: "gives a file a new name",
		decode: func(a [6]uint64) request {
			return request{op: opRename, dirfd2: fd(a[0]), path2: a[1], dirfd: fd(a[2]), path: a[3]}
		}},
	{name: "renameat2", nr: unix.SYS_RENAMEAT2, flagsArg: -1, why: "gives a file a new name, or swaps two",
		decode: func(a [6]uint64) request {
			return request{op: opRename, dirfd2: fd(a[0]), path2: a[1], dirfd: fd(a[2]), path: a[3], flags: a[4]}
		}},
	{name: "truncate", nr: unix.SYS_TRUNCATE, flagsArg: -1, why: "writes a file by its name",
		decode: func(a [6]uint64) request {
			return request{op: opTruncate, dirfd: atFDCWD, path: a[0], length: int64(a[1])}
		}},
	// A socket's address is in the task's memory, where the filter cannot
	// see whether it names a unix socket: every bind, connect and send with
	// an address goes to the warden, which does it on the task's own socket
	// (ADR 0024). A sendmsg's address, too, is in memory.
	{name: "bind", nr: unix.SYS_BIND, flagsArg: -1, why: "gives a socket an address: a unix socket a name in the file system",
		decode: func(a [6]uint64) request {
			return request{op: opBind, sock: fd(a[0]), addr: a[1], addrLen: uint32(a[2])}
		}},
	{name: "connect", nr: unix.SYS_CONNECT, flagsArg: -1, why: "connects a socket: a unix socket to whatever its path names",
		decode: func(a [6]uint64) request {
			return request{op: opConnect, sock: fd(a[0]), addr: a[1], addrLen: uint32(a[2])}
		}},
	{name: "sendto", nr: unix.SYS_SENDTO, flagsArg: -1, addrArg: 4, why: "sends a datagram to an address: a unix one to whatever its path names",
		decode: func(a [6]uint64) request {
			return request{op: opSendto, sock: fd(a[0]), buf: a[1], length: int64(a[2]), flags: a[3], addr: a[4], addrLen: uint32(a[5])}
		}},
	{name: "sendmsg", nr: unix.SYS_SENDMSG, flagsArg: -1, why: "sends a message, to the address it holds in memory if any",
		decode: func(a [6]uint64) request {
			return request{op: opSendmsg, sock: fd(a[0]), msg: a[1], flags: a[2]}
		}},
	{name: "sendmmsg", nr: unix.SYS_SENDMMSG, flagsArg: -1, why: "sends messages, to the addresses they hold in memory if any",
		decode: func(a [6]uint64) request {
			return request{op: opSendmmsg, sock: fd(a[0]), msg: a[1], vlen: uint32(a[2]), flags: a[3]}
		}},
	// The warden makes files with the task's umask, learned once
	// (knownTasks): it must hear of every change.
	{name: "umask", nr: unix.SYS_UMASK, flagsArg: -1, why: "changes the mask the warden makes the task's files with; the kernel carries it out",
		decode: func(a [6]uint64) request {
			return request{op: opUmask, mode: uint32(a[0]) & 0o777}
		}},
	// openat2's flags live in memory the task could change after a check,
	// and no libc uses it for open(3): it fails as on an older kernel, and
	// callers fall back to openat.
	{name: "openat2", nr: unix.SYS_OPENAT2, flagsArg: -1, errno: unix.ENOSYS,
		why: "its flags are in memory, out of the filter's sight; callers fall back to openat"},
}

// Calls is every call the filter names, for this architecture.
func calls() []call { return append(append([]call{}, commonCalls...), legacyCalls...) }

// writeFlags are the open flags that make a name or change a file: O_RDONLY
// is 0, so an open for writing always sets O_WRONLY or O_RDWR.
const writeFlags = unix.O_CREAT | unix.O_TRUNC | unix.O_WRONLY | unix.O_RDWR

// filter is the table as internal/seccompbpf compiles it: a call of any
// other ABI than the native one fails with EPERM, and one the table does
// not name is allowed.
func filter(table []call) seccompbpf.Filter {
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	f := seccompbpf.Filter{Arch: nativeArch, SecondABI: x32Bit, Foreign: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM), Default: allow}
	for _, c := range table {
		action := uint32(unix.SECCOMP_RET_USER_NOTIF)
		if c.errno != 0 {
			action = unix.SECCOMP_RET_ERRNO | uint32(c.errno)
		}
		nr := uint32(c.nr)
		switch {
		case c.addrArg > 0:
			// A pointer is null only when both its halves are.
			null := []seccompbpf.Cond{
				{Arg: c.addrArg, Test: seccompbpf.IsOneOf, Values: []uint32{0}},
				{Arg: c.addrArg, High: true, Test: seccompbpf.IsOneOf, Values: []uint32{0}},
			}
			f.Rules = append(f.Rules, seccompbpf.Rule{Nr: nr, When: null, Action: allow}, seccompbpf.Rule{Nr: nr, Action: action})
		case c.flagsArg >= 0:
			writes := []seccompbpf.Cond{{Arg: c.flagsArg, Test: seccompbpf.HasAny, Values: []uint32{writeFlags}}}
			f.Rules = append(f.Rules, seccompbpf.Rule{Nr: nr, When: writes, Action: action})
		default:
			f.Rules = append(f.Rules, seccompbpf.Rule{Nr: nr, Action: action})
		}
	}
	return f
}

// program is the filter as seccomp(2) takes it.
func program() ([]unix.SockFilter, error) {
	raw, err := seccompbpf.Compile(filter(calls()))
	if err != nil {
		return nil, err
	}
	prog := make([]unix.SockFilter, len(raw))
	for i, in := range raw {
		prog[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	return prog, nil
}

// Install puts the warden's filter on the calling thread and returns the
// listener the launcher answers on. The caller must hold its OS thread
// (runtime.LockOSThread) until it execs: seccomp filters belong to threads.
// The calling thread must already have no_new_privs (bwrap sets it).
//
// The filter waits killably once the warden holds a call: a signal then
// cannot restart a call the warden has already carried out (a Go program's
// preemption signals would otherwise run a mkdir twice).
func Install() (int, error) {
	if err := KernelSupports(); err != nil {
		return -1, err
	}
	prog, err := program()
	if err != nil {
		return -1, fmt.Errorf("the warden's filter does not compile: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	for {
		r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
		if errno == 0 {
			return int(r), nil
		}
		if errno == unix.EINVAL && flags&unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV != 0 {
			flags &^= unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV // before Linux 5.19
			continue
		}
		return -1, fmt.Errorf("cannot install the warden's filter: %w", errno)
	}
}

// MinKernel is the oldest Linux the warden runs on. Its calls need 5.9
// (installing a descriptor in a task); the floor stays where the product
// has always drawn it, since nothing here tests an older kernel (ADR 0029).
var MinKernel = [2]int{5, 14}

// KernelSupports reports whether the running kernel can host the warden.
func KernelSupports() error {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return err
	}
	release := unix.ByteSliceToString(u.Release[:])
	if !releaseAtLeast(release, MinKernel) {
		return fmt.Errorf("the sandbox needs Linux %d.%d or later for its warden; this kernel is %s", MinKernel[0], MinKernel[1], release)
	}
	return nil
}

// releaseAtLeast compares a kernel release ("6.8.0-45-generic") with want.
func releaseAtLeast(release string, want [2]int) bool {
	var major, minor int
	if _, err := fmt.Sscanf(release, "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > want[0] || (major == want[0] && minor >= want[1])
}
