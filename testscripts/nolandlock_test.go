package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// noLandlock ERRNO CMD [ARG...] runs CMD as on a kernel without Landlock:
// a seccomp filter on this thread, which CMD and everything it starts
// inherit, answers every landlock_* system call with ERRNO, ENOSYS (a
// kernel built without Landlock) or EOPNOTSUPP (one with Landlock switched
// off at boot). The product has no switch of its own for this, on purpose.
func noLandlock(args []string) int {
	errnos := map[string]unix.Errno{"ENOSYS": unix.ENOSYS, "EOPNOTSUPP": unix.EOPNOTSUPP}
	if len(args) < 2 || errnos[args[0]] == 0 {
		fmt.Fprintln(os.Stderr, "usage: no-landlock ENOSYS|EOPNOTSUPP CMD [ARG...]")
		return 2
	}
	path, err := exec.LookPath(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "no-landlock:", err)
		return 1
	}
	arch := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	prog := []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, K: arch, Jf: 4},
		{Code: ld, K: 0}, // seccomp_data.nr
		{Code: jeq, K: unix.SYS_LANDLOCK_CREATE_RULESET, Jt: 3},
		{Code: jeq, K: unix.SYS_LANDLOCK_ADD_RULE, Jt: 2},
		{Code: jeq, K: unix.SYS_LANDLOCK_RESTRICT_SELF, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(errnos[args[0]])},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// The filter is this thread's, and so is the exec that hands it on.
	runtime.LockOSThread()
	// Root may install a filter as it is; a user needs no_new_privs first,
	// which the launcher's sandbox sets anyway.
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno == unix.EACCES {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "no-landlock: no_new_privs:", err)
			return 1
		}
		if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
			fmt.Fprintln(os.Stderr, "no-landlock: seccomp:", errno)
			return 1
		}
	} else if errno != 0 {
		fmt.Fprintln(os.Stderr, "no-landlock: seccomp:", errno)
		return 1
	}
	err = syscall.Exec(path, args[1:], os.Environ())
	fmt.Fprintln(os.Stderr, "no-landlock:", err)
	return 1
}
