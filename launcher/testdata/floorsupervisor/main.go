// Command floorsupervisor measures the floor under the warden's cost: the
// warden's own filter on a bare bwrap's sandbox, answered by a supervisor
// that checks nothing. A call whose path lies in the workspace is carried
// out from outside, as the warden carries it out (an open's descriptor
// installed in the task, a mkdir made and answered); every other call goes
// on in the kernel (SECCOMP_USER_NOTIF_FLAG_CONTINUE), as a call the
// sandbox's Landlock domain holds does. What the launcher costs above this
// is the warden's own work: its reads, walks and checks.
//
//	floorsupervisor serve WORKSPACE NFDS -- BWRAP ARGS... -- floorsupervisor child @SOCK@ PRIVATE,... -- COMMAND...
//
// serve passes its descriptors 3 to 3+NFDS-1 on to bwrap at the same
// numbers, then the child's end of a socket pair, whose number replaces
// @SOCK@; child, run inside, locks the sandbox's private file systems as
// init does (warden.LockFiles), installs the warden's filter
// (warden.Install), sends its listener over that socket and execs the
// command. With
// CS_BENCH_FLOOR set, serve writes there, once the command has ended, how
// many calls it answered and its CPU time (nanoseconds): "CALLS CPU".
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/claude-sandbox/claude-sandbox/warden"
	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fail(fmt.Errorf("usage: floorsupervisor serve|child ..."))
	}
	var err error
	switch os.Args[1] {
	case "serve":
		var code int
		code, err = serve(os.Args[2:])
		if err == nil {
			os.Exit(code)
		}
	case "child":
		err = child(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	fail(err)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "floorsupervisor:", err)
	os.Exit(125)
}

func serve(args []string) (int, error) {
	if len(args) < 4 || args[2] != "--" {
		return 0, fmt.Errorf("serve WORKSPACE NFDS -- COMMAND...")
	}
	ws := args[0]
	nfds, err := strconv.Atoi(args[1])
	if err != nil {
		return 0, err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	argv := args[3:]
	for i, a := range argv {
		if a == "@SOCK@" {
			argv[i] = strconv.Itoa(3 + nfds)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	for fd := 3; fd < 3+nfds; fd++ {
		cmd.ExtraFiles = append(cmd.ExtraFiles, os.NewFile(uintptr(fd), "inherited"))
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, os.NewFile(uintptr(pair[1]), "child"))
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	unix.Close(pair[1])
	listener, err := receiveFD(pair[0])
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return 0, fmt.Errorf("no listener from the child: %w", err)
	}
	syncWakeUp(listener)
	if _, err := unix.Write(pair[0], []byte{0}); err != nil {
		return 0, err
	}
	go answer(listener, ws)
	err = cmd.Wait()
	if path := os.Getenv("CS_BENCH_FLOOR"); path != "" {
		var ru unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &ru)
		cpu := ru.Utime.Nano() + ru.Stime.Nano()
		if err := os.WriteFile(path, fmt.Appendf(nil, "%d %d\n", answered.Load(), cpu), 0o644); err != nil {
			return 0, err
		}
	}
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), nil
	}
	return 0, err
}

// answered counts the calls the floor answered, for CS_BENCH_FLOOR.
var answered atomic.Int64

func child(args []string) error {
	if len(args) < 4 || args[2] != "--" {
		return fmt.Errorf("child FD PRIVATE,... -- COMMAND...")
	}
	sock, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	unix.CloseOnExec(sock)
	runtime.LockOSThread()
	if _, _, err := warden.LockFiles(strings.Split(args[1], ",")); err != nil {
		return err
	}
	listener, err := warden.Install()
	if err != nil {
		return err
	}
	// The filter sends this thread's sendmsg to the listener, which nobody
	// serves yet: another thread sends it, as init's does.
	sent := make(chan error)
	go func() { sent <- unix.Sendmsg(sock, []byte{0}, unix.UnixRights(listener), nil, 0) }()
	if err := <-sent; err != nil {
		return err
	}
	unix.Close(listener)
	if _, err := unix.Read(sock, make([]byte, 1)); err != nil {
		return err
	}
	path, err := exec.LookPath(args[3])
	if err != nil {
		return err
	}
	return unix.Exec(path, args[3:], os.Environ())
}

func receiveFD(sock int) (int, error) {
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(sock, make([]byte, 1), oob, 0)
	if err != nil {
		return -1, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("no descriptor (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, fmt.Errorf("no descriptor (%v)", err)
	}
	return fds[0], nil
}

// The kernel's seccomp_unotify(2) structures, as the warden declares them.
type notif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type notifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

type notifAddfd struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

func ioctl(fd int, req uintptr, arg unsafe.Pointer) (uintptr, unix.Errno) {
	for {
		r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(arg))
		if errno != unix.EINTR {
			return r, errno
		}
	}
}

func syncWakeUp(listener int) {
	unix.Syscall(unix.SYS_IOCTL, uintptr(listener), 0x40082104, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
}

// A call the floor may carry out: which of its arguments hold the
// directory (-1: the working directory), the path, the flags and the mode.
// Any other trapped call goes on.
type carried struct {
	dirfd, path, flags, mode int
	mkdir                    bool
}

// answer runs on one thread, as the warden's receiving worker does.
func answer(listener int, ws string) {
	runtime.LockOSThread()
	for {
		n := notif{}
		if _, errno := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); errno != 0 {
			if errno == unix.ENOENT {
				continue
			}
			return
		}
		answered.Add(1)
		c, ok := calls[int(n.nr)]
		if !ok {
			goOn(listener, n.id)
			continue
		}
		path, err := readPath(int(n.pid), n.args[c.path])
		if err != nil {
			goOn(listener, n.id)
			continue
		}
		dir := "/proc/" + strconv.Itoa(int(n.pid)) + "/cwd"
		if c.dirfd >= 0 && int32(n.args[c.dirfd]) != unix.AT_FDCWD {
			dir = "/proc/" + strconv.Itoa(int(n.pid)) + "/fd/" + strconv.Itoa(int(int32(n.args[c.dirfd])))
		}
		if !inWorkspace(dir, path, ws) {
			goOn(listener, n.id)
			continue
		}
		carryOut(listener, n, c, dir, path)
	}
}

func goOn(listener int, id uint64) {
	r := notifResp{id: id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// inWorkspace reads the path as the warden's first look does: an absolute
// path by its text, a relative one by where its directory is.
func inWorkspace(dir, path, ws string) bool {
	if !filepath.IsAbs(path) {
		d, err := os.Readlink(dir)
		if err != nil {
			return false
		}
		path = filepath.Join(d, path)
	}
	return path == ws || strings.HasPrefix(path, ws+"/")
}

func carryOut(listener int, n notif, c carried, dir, path string) {
	d, err := unix.Open(dir, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		send(listener, n.id, 0, err.(unix.Errno))
		return
	}
	defer unix.Close(d)
	mode := uint32(n.args[c.mode]) &^ 0o022
	if c.mkdir {
		err := unix.Mkdirat(d, path, mode)
		send(listener, n.id, 0, errnoOf(err))
		return
	}
	flags := int(n.args[c.flags])
	fd, err := unix.Openat(d, path, flags|unix.O_CLOEXEC, mode)
	if err != nil {
		send(listener, n.id, 0, errnoOf(err))
		return
	}
	a := notifAddfd{id: n.id, srcfd: uint32(fd)}
	if flags&unix.O_CLOEXEC != 0 {
		a.newfdFlags = unix.O_CLOEXEC
	}
	got, errno := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&a))
	unix.Close(fd)
	send(listener, n.id, int64(got), errno)
}

func send(listener int, id uint64, val int64, errno unix.Errno) {
	r := notifResp{id: id, val: val, error: -int32(errno)}
	ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

func errnoOf(err error) unix.Errno {
	if e, ok := err.(unix.Errno); ok {
		return e
	}
	if err == nil {
		return 0
	}
	return unix.EIO
}

func readPath(pid int, addr uint64) (string, error) {
	buf := make([]byte, unix.PathMax)
	page := uint64(os.Getpagesize())
	n := min(uint64(len(buf)), page-addr%page)
	var out []byte
	for len(out) < unix.PathMax {
		local := []unix.Iovec{{Base: &buf[0], Len: n}}
		remote := []unix.RemoteIovec{{Base: uintptr(addr) + uintptr(len(out)), Len: int(n)}}
		got, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err != nil {
			return "", err
		}
		if i := strings.IndexByte(string(buf[:got]), 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf[:got]...)
		n = min(uint64(len(buf)), page)
	}
	return "", unix.ENAMETOOLONG
}
