package verify

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"golang.org/x/sys/unix"
)

// Each probe below makes a call that the sandbox refuses with EPERM (the
// seccomp filter, or for mount and sethostname the missing capability),
// and is built so that even a success would change nothing outside this
// process: bad arguments, descriptor -1, a keyring id of 0, the current
// host name.

// refusedAll demands EPERM from every call. For a filtered call any other
// error means the kernel itself answered (the probe's bad arguments)
// because no filter refused it first.
func refusedAll(calls []string, errs []error) (string, error) {
	for i, call := range calls {
		switch err := errs[i]; {
		case err == nil:
			return "", fmt.Errorf("%s succeeded", call)
		case !errors.Is(err, unix.EPERM):
			return "", fmt.Errorf("%s failed with %w, not EPERM", call, err)
		}
	}
	return strings.Join(calls, ", ") + " refused with EPERM", nil
}

// unixSocket is a named socket listed in /proc/net/unix.
type unixSocket struct {
	network string   // for net.Dial: unix, unixgram or unixpacket
	addr    string   // a path, or @name for an abstract socket
	inodes  []string // of every socket listed with this name (a listener's accepted ones carry its name)
}

// parseNetUnix reads /proc/net/unix, which lists every unix socket of the
// network namespace the sandbox shares with the host, and returns the
// named ones, each once.
func parseNetUnix(r io.Reader) ([]unixSocket, error) {
	networks := map[string]string{"0001": "unix", "0002": "unixgram", "0005": "unixpacket"}
	seen := map[[2]string]int{}
	var out []unixSocket
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[0] == "Num" {
			continue // a header, or a socket without a name
		}
		network, ok := networks[f[4]]
		if !ok {
			continue
		}
		key := [2]string{network, strings.Join(f[7:], " ")}
		if i, ok := seen[key]; ok {
			out[i].inodes = append(out[i].inodes, f[6])
			continue
		}
		seen[key] = len(out)
		out = append(out, unixSocket{key[0], key[1], []string{f[6]}})
	}
	return out, sc.Err()
}

// socketsHeldInside returns the inodes of the sockets that processes of the
// sandbox hold open: the sandbox's own, which it may reach (ADR 0024).
func socketsHeldInside(procs []process) map[string]bool {
	held := map[string]bool{}
	for _, p := range procs {
		dir := fmt.Sprintf("/proc/%d/fd", p.pid)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:[") {
				held[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	return held
}

// hostSocketsUnreachable: connecting to every named unix socket the
// kernel lists (the host's and the container's, by path and abstract
// name) fails, but for the sandbox's own, which a process inside holds.
// It probes each one; it does not just look.
func hostSocketsUnreachable(f *facts) (string, error) {
	if f.procsErr != nil {
		return "", f.procsErr
	}
	own := socketsHeldInside(f.procs)
	list, err := os.Open("/proc/net/unix")
	if err != nil {
		return "", err
	}
	listed, err := parseNetUnix(list)
	list.Close()
	if err != nil {
		return "", err
	}
	var socks []unixSocket
	for _, s := range listed {
		if !slices.ContainsFunc(s.inodes, func(ino string) bool { return own[ino] }) {
			socks = append(socks, s)
		}
	}
	var reached []string
	why := map[string]int{}
	abstract := 0
	for _, s := range socks {
		if strings.HasPrefix(s.addr, "@") {
			abstract++
		}
		conn, err := net.DialTimeout(s.network, s.addr, time.Second)
		if err == nil {
			conn.Close()
			reached = append(reached, s.addr)
			continue
		}
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		why[err.Error()]++
	}
	if len(reached) > 0 {
		return "", fmt.Errorf("%d of %d listed sockets accepted a connection: %s", len(reached), len(socks), strings.Join(reached, ", "))
	}
	var reasons []string
	for r, n := range why {
		reasons = append(reasons, fmt.Sprintf("%s (%d)", r, n))
	}
	sort.Strings(reasons)
	detail := fmt.Sprintf("%d listed (%d by path, %d abstract), none reachable", len(socks), len(socks)-abstract, abstract)
	if n := len(listed) - len(socks); n > 0 {
		detail = fmt.Sprintf("%d listed but the sandbox's own %d (%d by path, %d abstract), none reachable", len(socks), n, len(socks)-abstract, abstract)
	}
	if len(reasons) > 0 {
		detail += ": " + strings.Join(reasons, ", ")
	}
	return detail, nil
}

// unshareUserRefused: unshare(CLONE_NEWUSER) fails with the filter's
// EPERM; a new user namespace would hand out every capability again.
// (Go is multithreaded, so without the filter the kernel says EINVAL.)
func unshareUserRefused(*facts) (string, error) {
	return refusedAll([]string{"unshare(CLONE_NEWUSER)"}, []error{unix.Unshare(unix.CLONE_NEWUSER)})
}

// cloneUserRefused: clone(CLONE_NEWUSER) fails with EPERM, the other way
// to a new user namespace.
func cloneUserRefused(*facts) (string, error) {
	pid, _, errno := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 {
		return refusedAll([]string{"clone(CLONE_NEWUSER)"}, []error{errno})
	}
	if pid == 0 { // the child: leave at once
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws unix.WaitStatus
	unix.Wait4(int(pid), &ws, 0, nil)
	return "", errors.New("clone(CLONE_NEWUSER) succeeded: a child ran in a new user namespace")
}

// clone3Refused: clone3, whose flags a filter cannot read, fails with
// ENOSYS, so libc falls back to clone where CLONE_NEWUSER is checked.
func clone3Refused(*facts) (string, error) {
	_, _, errno := unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
	if errno == unix.ENOSYS {
		return "clone3 refused with ENOSYS", nil
	}
	return "", fmt.Errorf("clone3 reached the kernel (%w): no filter refused it", errno)
}

// keyringRefused: the kernel keyrings, which are not namespaced, are out
// of reach (keyctl, add_key and request_key fail with EPERM).
func keyringRefused(*facts) (string, error) {
	_, errKeyctl := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
	_, errAdd := unix.AddKey("claude-sandbox-verify", "probe", nil, 0)
	_, errRequest := unix.RequestKey("claude-sandbox-verify", "probe", "", 0)
	return refusedAll([]string{"keyctl", "add_key", "request_key"}, []error{errKeyctl, errAdd, errRequest})
}

// ioUringRefused: io_uring, whose operations (socket, connect, openat)
// would bypass the syscall filter, cannot be used.
func ioUringRefused(*facts) (string, error) {
	var errs []error
	for _, nr := range []uintptr{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER} {
		_, _, errno := unix.RawSyscall6(nr, ^uintptr(0), 0, 0, 0, 0, 0)
		errs = append(errs, errnoErr(errno))
	}
	return refusedAll([]string{"io_uring_setup", "io_uring_enter", "io_uring_register"}, errs)
}

// terminalInjectionRefused: ioctl(TIOCSTI) and ioctl(TIOCLINUX), which
// push keystrokes into the terminal outside, fail with EPERM. The probe
// uses descriptor -1: the filter answers before the kernel's EBADF.
func terminalInjectionRefused(*facts) (string, error) {
	var errs []error
	for _, req := range []uintptr{unix.TIOCSTI, unix.TIOCLINUX} {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, ^uintptr(0), req, 0)
		errs = append(errs, errnoErr(errno))
	}
	return refusedAll([]string{"ioctl(TIOCSTI)", "ioctl(TIOCLINUX)"}, errs)
}

// errnoErr turns a raw syscall's errno into an error, nil for success.
func errnoErr(errno unix.Errno) error {
	if errno == 0 {
		return nil
	}
	return errno
}

// mountRefused: mount(2) fails, so no mount can be undone, covered or
// added. The probe would put a tmpfs on the inside marker's directory
// (and takes it off again if that worked).
func mountRefused(*facts) (string, error) {
	err := unix.Mount("tmpfs", layout.InsideMarker, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k")
	if err == nil {
		unix.Unmount(layout.InsideMarker, unix.MNT_DETACH)
	}
	return refusedAll([]string{"mount(tmpfs)"}, []error{err})
}

// hostnameUnchangeable: sethostname fails (no capability; the UTS
// namespace is the sandbox's own besides). The probe sets the current
// name, so even a success changes nothing.
func hostnameUnchangeable(*facts) (string, error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", err
	}
	return refusedAll([]string{"sethostname"}, []error{unix.Sethostname([]byte(unix.ByteSliceToString(u.Nodename[:])))})
}
