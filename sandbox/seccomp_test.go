package sandbox

import (
	"encoding/binary"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// run interprets the filter the way the kernel does for one syscall. It is
// small because the filter only uses absolute loads, jeq/jge/jset and ret.
func run(t *testing.T, prog []byte, arch uint32, nr uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.NativeEndian.PutUint32(data[0:], nr)
	binary.NativeEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.NativeEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; ; pc++ {
		if 8*pc+8 > len(prog) {
			t.Fatalf("program counter %d ran off the end of the filter", pc)
		}
		code := binary.NativeEndian.Uint16(prog[8*pc:])
		jt, jf := prog[8*pc+2], prog[8*pc+3]
		k := binary.NativeEndian.Uint32(prog[8*pc+4:])
		jump := func(cond bool) {
			if cond {
				pc += int(jt)
			} else {
				pc += int(jf)
			}
		}
		switch code {
		case ldAbs:
			acc = binary.NativeEndian.Uint32(data[k:])
		case jeq:
			jump(acc == k)
		case jge:
			jump(acc >= k)
		case jset:
			jump(acc&k != 0)
		case retK:
			return k
		default:
			t.Fatalf("unexpected instruction %#x at %d", code, pc)
		}
	}
}

func TestSeccompRules(t *testing.T) {
	prog := SeccompProgram()
	eperm := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	enosys := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	allowed := uint32(unix.SECCOMP_RET_ALLOW)
	type call struct {
		name string
		arch uint32
		nr   uintptr
		args []uint64
		want uint32
	}
	tests := []call{
		{"unix socket", nativeArch, unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, eperm},
		{"unix socket, high bits set", nativeArch, unix.SYS_SOCKET, []uint64{1<<32 | unix.AF_UNIX}, eperm},
		{"inet socket", nativeArch, unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM}, allowed},
		{"inet6 socket", nativeArch, unix.SYS_SOCKET, []uint64{unix.AF_INET6, unix.SOCK_DGRAM}, allowed},
		{"netlink socket", nativeArch, unix.SYS_SOCKET, []uint64{unix.AF_NETLINK}, allowed},
		{"socketpair stays", nativeArch, unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX}, allowed},
		{"TIOCSTI", nativeArch, unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI}, eperm},
		{"TIOCSTI, high bits set", nativeArch, unix.SYS_IOCTL, []uint64{0, 0xffffffff00000000 | unix.TIOCSTI}, eperm},
		{"TIOCLINUX", nativeArch, unix.SYS_IOCTL, []uint64{0, unix.TIOCLINUX}, eperm},
		{"TCGETS", nativeArch, unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, allowed},
		{"TIOCGWINSZ", nativeArch, unix.SYS_IOCTL, []uint64{0, unix.TIOCGWINSZ}, allowed},
		{"keyctl", nativeArch, unix.SYS_KEYCTL, nil, eperm},
		{"add_key", nativeArch, unix.SYS_ADD_KEY, nil, eperm},
		{"request_key", nativeArch, unix.SYS_REQUEST_KEY, nil, eperm},
		{"unshare user", nativeArch, unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWUSER | unix.CLONE_NEWNS}, eperm},
		{"unshare mount", nativeArch, unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWNS}, allowed},
		{"clone user", nativeArch, unix.SYS_CLONE, []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, eperm},
		{"clone thread", nativeArch, unix.SYS_CLONE, []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD}, allowed},
		{"clone3", nativeArch, unix.SYS_CLONE3, nil, enosys},
		{"io_uring_setup", nativeArch, unix.SYS_IO_URING_SETUP, nil, eperm},
		{"io_uring_enter", nativeArch, unix.SYS_IO_URING_ENTER, nil, eperm},
		{"io_uring_register", nativeArch, unix.SYS_IO_URING_REGISTER, nil, eperm},
		{"read", nativeArch, unix.SYS_READ, nil, allowed},
		{"connect", nativeArch, unix.SYS_CONNECT, nil, allowed},
		{"foreign arch i386", unix.AUDIT_ARCH_I386, unix.SYS_READ, nil, eperm},
		{"foreign arch arm", unix.AUDIT_ARCH_ARM, unix.SYS_READ, nil, eperm},
	}
	if x32Bit != 0 {
		tests = append(tests, call{"x32 syscall", nativeArch, x32Bit | unix.SYS_READ, nil, eperm})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := run(t, prog, tt.arch, uint32(tt.nr), tt.args...); got != tt.want {
				t.Errorf("filter returned %s, want %s", action(got), action(tt.want))
			}
		})
	}
}

func action(v uint32) string {
	switch {
	case v == unix.SECCOMP_RET_ALLOW:
		return "ALLOW"
	case v&0xffff0000 == unix.SECCOMP_RET_ERRNO:
		return fmt.Sprintf("ERRNO(%s)", unix.ErrnoName(unix.Errno(v&0xffff)))
	}
	return fmt.Sprintf("%#x", v)
}
