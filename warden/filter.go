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
// under which argument, and what happens to them, in the form of the
// sandbox's filter (seccompbpf.Table).

// A call is one system call the filter names: its rows in the filter's
// table, tried in order, and how the warden reads its registers.
type call struct {
	rows []seccompbpf.Row
	// decode reads the call's registers into a request; nil for a call
	// the filter fails outright.
	decode func(a [6]uint64) request
}

// nr is the call's number.
func (c call) nr() uintptr { return uintptr(c.rows[0].Syscall.Nr) }

// name is the call's name.
func (c call) name() string { return c.rows[0].Syscall.Name }

// notify is a call the filter sends to the warden whatever its arguments.
func notify(name string, nr uintptr, why string, decode func(a [6]uint64) request) call {
	return call{rows: []seccompbpf.Row{{Name: name, Syscall: sysOf(name, nr), Action: seccompbpf.Notify, Why: why}}, decode: decode}
}

// notifyWriting is an open the filter sends to the warden only when its
// flags, argument flagsArg, ask to create, truncate or write: an open for
// reading needs no decision.
func notifyWriting(name string, nr uintptr, flagsArg int, why string, decode func(a [6]uint64) request) call {
	writes := seccompbpf.ArgHasAny(seccompbpf.Arg{N: flagsArg, Name: "flags"}, writeFlags...)
	return call{rows: []seccompbpf.Row{{Name: name, Syscall: sysOf(name, nr), When: []seccompbpf.ArgCond{writes}, Action: seccompbpf.Notify, Why: why}}, decode: decode}
}

// notifyAddressed is a send the filter sends to the warden only when its
// destination (dest_addr), argument addrArg, is not a null pointer:
// without one the kernel reads no address, whatever the task's memory
// holds. A pointer is null only when both its halves are.
func notifyAddressed(name string, nr uintptr, addrArg int, why string, decode func(a [6]uint64) request) call {
	sys := sysOf(name, nr)
	unaddressed := []seccompbpf.ArgCond{
		seccompbpf.ArgIs(seccompbpf.Arg{N: addrArg, Name: "dest_addr's low half"}, null),
		seccompbpf.ArgIs(seccompbpf.Arg{N: addrArg, High: true, Name: "dest_addr's high half"}, null),
	}
	return call{rows: []seccompbpf.Row{
		{Name: name + "-unaddressed", Syscall: sys, When: unaddressed, Action: seccompbpf.Allow,
			Why: "no destination: the kernel reads no address, and the socket sends to the peer it is connected to"},
		{Name: name, Syscall: sys, Action: seccompbpf.Notify, Why: why},
	}, decode: decode}
}

// refuse is a call the filter fails with e, whatever its arguments.
func refuse(name string, nr uintptr, e unix.Errno, why string) call {
	return call{rows: []seccompbpf.Row{{Name: name, Syscall: sysOf(name, nr), Action: seccompbpf.Errno(e), Why: why}}}
}

func sysOf(name string, nr uintptr) seccompbpf.Syscall {
	return seccompbpf.Syscall{Name: name, Nr: uint32(nr)}
}

// writeFlags are the open flags that make a name or change a file: O_RDONLY
// is 0, so an open for writing always sets O_WRONLY or O_RDWR.
var writeFlags = []seccompbpf.Value{
	{Name: "O_CREAT", Value: unix.O_CREAT},
	{Name: "O_TRUNC", Value: unix.O_TRUNC},
	{Name: "O_WRONLY", Value: unix.O_WRONLY},
	{Name: "O_RDWR", Value: unix.O_RDWR},
}

var null = seccompbpf.Value{Name: "NULL", Value: 0}

const atFDCWD = unix.AT_FDCWD

func fd(a uint64) int { return int(int32(a)) }

// calls common to every architecture; calls_*.go add the older ones that
// only some architectures have.
var commonCalls = []call{
	notifyWriting("openat", unix.SYS_OPENAT, 2, "creates a file name with O_CREAT, or writes a file",
		func(a [6]uint64) request {
			return request{op: opOpen, dirfd: fd(a[0]), path: a[1], flags: a[2], mode: uint32(a[3])}
		}),
	notify("mkdirat", unix.SYS_MKDIRAT, "creates a directory",
		func(a [6]uint64) request {
			return request{op: opMkdir, dirfd: fd(a[0]), path: a[1], mode: uint32(a[2])}
		}),
	notify("mknodat", unix.SYS_MKNODAT, "creates a file, pipe or device node",
		func(a [6]uint64) request {
			return request{op: opMknod, dirfd: fd(a[0]), path: a[1], mode: uint32(a[2]), dev: a[3]}
		}),
	notify("symlinkat", unix.SYS_SYMLINKAT, "creates a symbolic link",
		func(a [6]uint64) request {
			return request{op: opSymlink, target: a[0], dirfd: fd(a[1]), path: a[2]}
		}),
	notify("linkat", unix.SYS_LINKAT, "creates a hard link",
		func(a [6]uint64) request {
			return request{op: opLink, dirfd2: fd(a[0]), path2: a[1], dirfd: fd(a[2]), path: a[3], flags: a[4]}
		}),
	notify("renameat", unix.SYS_RENAMEAT, "gives a file a new name",
		func(a [6]uint64) request {
			return request{op: opRename, dirfd2: fd(a[0]), path2: a[1], dirfd: fd(a[2]), path: a[3]}
		}),
	notify("renameat2", unix.SYS_RENAMEAT2, "gives a file a new name, or swaps two",
		func(a [6]uint64) request {
			return request{op: opRename, dirfd2: fd(a[0]), path2: a[1], dirfd: fd(a[2]), path: a[3], flags: a[4]}
		}),
	notify("truncate", unix.SYS_TRUNCATE, "writes a file by its name",
		func(a [6]uint64) request {
			return request{op: opTruncate, dirfd: atFDCWD, path: a[0], length: int64(a[1])}
		}),
	// A socket's address is in the task's memory, where the filter cannot
	// see whether it names a unix socket: every bind, connect and send with
	// an address goes to the warden, which does it on the task's own socket
	// (ADR 0024). A sendmsg's address, too, is in memory.
	notify("bind", unix.SYS_BIND, "gives a socket an address: a unix socket a name in the file system",
		func(a [6]uint64) request {
			return request{op: opBind, sock: fd(a[0]), addr: a[1], addrLen: uint32(a[2])}
		}),
	notify("connect", unix.SYS_CONNECT, "connects a socket: a unix socket to whatever its path names",
		func(a [6]uint64) request {
			return request{op: opConnect, sock: fd(a[0]), addr: a[1], addrLen: uint32(a[2])}
		}),
	notifyAddressed("sendto", unix.SYS_SENDTO, 4, "sends a datagram to an address: a unix one to whatever its path names",
		func(a [6]uint64) request {
			return request{op: opSendto, sock: fd(a[0]), buf: a[1], length: int64(a[2]), flags: a[3], addr: a[4], addrLen: uint32(a[5])}
		}),
	notify("sendmsg", unix.SYS_SENDMSG, "sends a message, to the address it holds in memory if any",
		func(a [6]uint64) request {
			return request{op: opSendmsg, sock: fd(a[0]), msg: a[1], flags: a[2]}
		}),
	notify("sendmmsg", unix.SYS_SENDMMSG, "sends messages, to the addresses they hold in memory if any",
		func(a [6]uint64) request {
			return request{op: opSendmmsg, sock: fd(a[0]), msg: a[1], vlen: uint32(a[2]), flags: a[3]}
		}),
	// The warden makes files with the task's umask, learned once
	// (knownTasks): it must hear of every change.
	notify("umask", unix.SYS_UMASK, "changes the mask the warden makes the task's files with; the kernel carries it out",
		func(a [6]uint64) request {
			return request{op: opUmask, mode: uint32(a[0]) & 0o777}
		}),
	// openat2's flags live in memory the task could change after a check,
	// and no libc uses it for open(3): it fails as on an older kernel, and
	// callers fall back to openat.
	refuse("openat2", unix.SYS_OPENAT2, unix.ENOSYS, "its flags are in memory, out of the filter's sight; callers fall back to openat"),
}

// Calls is every call the filter names, for this architecture.
func calls() []call { return append(append([]call{}, commonCalls...), legacyCalls...) }

// table is the filter of the calls: a call of any other ABI than the
// native one fails with EPERM, and one no row decides is allowed.
func table(calls []call) seccompbpf.Table {
	t := seccompbpf.Table{
		Name:     "warden-seccomp",
		OtherABI: seccompbpf.Errno(unix.EPERM), OtherABIWhy: "the rules are written in native syscall numbers",
		Otherwise: seccompbpf.Allow, OtherwiseWhy: "a call that makes no name, opens no file for writing and gives no socket an address needs no decision",
	}
	for _, c := range calls {
		t.Rows = append(t.Rows, c.rows...)
	}
	return t
}

// Filter is the warden's filter as a table, for this architecture: what
// the plan holds, `argv --explain` prints and Install compiles.
func Filter() seccompbpf.Table { return table(calls()) }

// program is the filter as seccomp(2) takes it.
func program() ([]unix.SockFilter, error) {
	raw, err := Filter().Program(nativeArch, x32Bit)
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
