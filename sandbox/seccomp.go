package sandbox

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// The seccomp filter bwrap installs before it runs Claude. Each rule closes a
// path that the mount and namespace setup cannot:
//
//   - socket(AF_UNIX): read-only binds do not stop connect() to a unix
//     socket, and abstract sockets have no path at all. No new unix socket
//     can be made, so no host socket (Docker, ssh-agent, VS Code, dbus) can be
//     reached. socketpair() stays allowed: it cannot reach anything outside.
//   - ioctl(TIOCSTI, TIOCLINUX): pushing keystrokes into the outer terminal.
//   - keyctl, add_key, request_key: the kernel keyrings are not namespaced.
//   - unshare/clone with CLONE_NEWUSER, and clone3 (whose flags a filter
//     cannot read): a nested user namespace hands out capabilities again.
//   - io_uring: its operations (socket, connect, openat) bypass this filter.
//   - any other syscall ABI (i386, x32, arm32): the rules above are written in
//     native syscall numbers only.
//
// Denied calls fail with EPERM (ENOSYS for clone3, so libc falls back to
// clone, where the flags are checked).

type insn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

const (
	ldAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jge    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	jset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	retK   = unix.BPF_RET | unix.BPF_K
	offNr  = 0
	offArc = 4
)

func offArg(i int) uint32 { return 16 + 8*uint32(i) } // low 32 bits on little-endian

func ret(v uint32) insn { return insn{code: retK, k: v} }

var (
	allow  = ret(unix.SECCOMP_RET_ALLOW)
	eperm  = ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	enosys = ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	loadNr = insn{code: ldAbs, k: offNr}
)

// deny fails the syscall outright.
func deny(nr uintptr, r insn) []insn {
	return []insn{{code: jeq, k: uint32(nr), jf: 1}, r}
}

// denyArgEq fails the syscall when its argument equals one of values.
func denyArgEq(nr uintptr, arg int, values ...uint32) []insn {
	n := len(values)
	out := []insn{{code: jeq, k: uint32(nr), jf: uint8(n + 3)}, {code: ldAbs, k: offArg(arg)}}
	for i, v := range values {
		if i < n-1 {
			out = append(out, insn{code: jeq, k: v, jt: uint8(n - 1 - i)})
		} else {
			out = append(out, insn{code: jeq, k: v, jf: 1})
		}
	}
	return append(out, eperm, loadNr)
}

// denyArgBits fails the syscall when its argument has any of bits set.
func denyArgBits(nr uintptr, arg int, bits uint32) []insn {
	return []insn{{code: jeq, k: uint32(nr), jf: 4}, {code: ldAbs, k: offArg(arg)}, {code: jset, k: bits, jf: 1}, eperm, loadNr}
}

func filter() []insn {
	p := []insn{{code: ldAbs, k: offArc}, {code: jeq, k: nativeArch, jt: 1}, eperm, loadNr}
	if x32Bit != 0 {
		p = append(p, insn{code: jge, k: x32Bit, jf: 1}, eperm)
	}
	p = append(p, denyArgEq(unix.SYS_SOCKET, 0, unix.AF_UNIX)...)
	p = append(p, denyArgEq(unix.SYS_IOCTL, 1, unix.TIOCSTI, unix.TIOCLINUX)...)
	p = append(p, deny(unix.SYS_KEYCTL, eperm)...)
	p = append(p, deny(unix.SYS_ADD_KEY, eperm)...)
	p = append(p, deny(unix.SYS_REQUEST_KEY, eperm)...)
	p = append(p, denyArgBits(unix.SYS_UNSHARE, 0, unix.CLONE_NEWUSER)...)
	p = append(p, denyArgBits(unix.SYS_CLONE, 0, unix.CLONE_NEWUSER)...)
	p = append(p, deny(unix.SYS_CLONE3, enosys)...)
	p = append(p, deny(unix.SYS_IO_URING_SETUP, eperm)...)
	p = append(p, deny(unix.SYS_IO_URING_ENTER, eperm)...)
	p = append(p, deny(unix.SYS_IO_URING_REGISTER, eperm)...)
	return append(p, allow)
}

// SeccompProgram is the filter as bwrap's --seccomp expects it: an array of
// struct sock_filter in native byte order.
func SeccompProgram() []byte {
	prog := filter()
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		out = binary.NativeEndian.AppendUint16(out, in.code)
		out = append(out, in.jt, in.jf)
		out = binary.NativeEndian.AppendUint32(out, in.k)
	}
	return out
}
