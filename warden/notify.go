package warden

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's seccomp user-notification interface (seccomp_unotify(2)).

// notif is struct seccomp_notif: one system call a sandboxed task is
// blocked in, waiting for the warden's answer.
type notif struct {
	id    uint64
	pid   uint32 // the calling thread, in the warden's PID namespace
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

// notifResp is struct seccomp_notif_resp.
type notifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// notifAddfd is struct seccomp_notif_addfd.
type notifAddfd struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

// ioctl makes one of the listener's calls, again when a signal interrupted
// it: each of the calls below, interrupted, has done nothing (ADR 0029), so
// none is lost or made twice by trying again.
func ioctl(fd int, req uintptr, arg unsafe.Pointer) (uintptr, error) {
	for {
		r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		switch errno {
		case 0:
			return r, nil
		case unix.EINTR:
			continue
		}
		return 0, errno
	}
}

// receive waits for the next notification.
func receive(listener int) (*notif, error) {
	n := &notif{} // the kernel demands a zeroed struct
	if _, err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(n)); err != nil {
		return nil, err
	}
	return n, nil
}

// valid reports whether the task of notification id is still blocked on
// it, so that what was read about the task (its memory, its directories)
// belongs to that task and not to one that reused its PID.
func valid(listener int, id uint64) bool {
	_, err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id))
	return err == nil
}

// answer ends the system call with result val, or with errno when it is
// not zero.
func answer(listener int, id uint64, val int64, errno unix.Errno) error {
	r := notifResp{id: id, val: val, error: -int32(errno)}
	_, err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
	return err
}

// answerContinue lets the call go on: the kernel carries it out for the
// task itself, reading its arguments again (a umask call; a call that
// goeson.go lets go on).
func answerContinue(listener int, id uint64) error {
	r := notifResp{id: id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	_, err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
	return err
}

// install puts fd in the task's descriptor table and returns the number
// the task got; the warden answers with it after, in two steps and never
// in one (SECCOMP_ADDFD_FLAG_SEND): the kernel marks a one-step answer
// given before the task has taken the descriptor, and when a signal
// interrupts the warden's wait for that, it withdraws the descriptor but
// not the answer, and the task's call returns 0, its standard input, as if
// it were the file (ADR 0029). Installed first, a descriptor interrupted on
// its way is withdrawn or taken, never half: the install is tried again,
// and the answer names what the task holds. An install that fails leaves
// the call unanswered.
func install(listener int, id uint64, fd int, cloexec bool) (int64, error) {
	a := notifAddfd{id: id, srcfd: uint32(fd)}
	if cloexec {
		a.newfdFlags = unix.O_CLOEXEC
	}
	got, err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&a))
	return int64(got), err
}

// notifSetFlags is SECCOMP_IOCTL_NOTIF_SET_FLAGS (Linux 6.6), which
// golang.org/x/sys does not name.
const notifSetFlags = 0x40082104

// syncWakeUp asks the kernel to run the receiving worker on the CPU of the
// task that waits for it, and the task again on the worker's when answered:
// the two take turns and never both run, and a wake-up on another CPU (an
// interrupt between CPUs, costly in a virtual machine) is spared. Only
// speed depends on it: an older kernel refuses it, and nothing changes.
func syncWakeUp(listener int) {
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(listener), notifSetFlags, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
}
