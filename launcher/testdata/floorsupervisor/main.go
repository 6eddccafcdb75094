// Command floorsupervisor measures the floor under the warden's cost: the
// warden's own filter and the kernel's lock on a bare bwrap's sandbox,
// answered by a supervisor that checks nothing. A call on a name that lies
// on a locked file system goes on in the kernel
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE), as the warden lets it; any other is
// carried out from outside, as the warden carries it out (an open's
// descriptor installed in the task; a mkdir, mknod, symlink, link, rename
// or truncate made and answered); a socket's call goes on. What the
// launcher costs above this is the warden's own work: its reads, walks
// and checks.
//
//	floorsupervisor serve NFDS -- BWRAP ARGS... -- floorsupervisor child @SOCK@ PRIVATE,... -- COMMAND...
//
// serve passes its descriptors 3 to 3+NFDS-1 on to bwrap at the same
// numbers, then the child's end of a socket pair, whose number replaces
// @SOCK@; child, run inside, locks the sandbox's private file systems as
// init does (warden.LockFiles), installs the warden's filter
// (warden.Install), sends its listener and the locked directories over
// that socket and execs the command. With
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
	if len(args) < 3 || args[1] != "--" {
		return 0, fmt.Errorf("serve NFDS -- COMMAND...")
	}
	nfds, err := strconv.Atoi(args[0])
	if err != nil {
		return 0, err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	argv := args[2:]
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
	listener, locked, err := receiveListener(pair[0])
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return 0, fmt.Errorf("no listener from the child: %w", err)
	}
	syncWakeUp(listener)
	if _, err := unix.Write(pair[0], []byte{0}); err != nil {
		return 0, err
	}
	go answer(listener, locked)
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
	locked, _, err := warden.LockFiles(strings.Split(args[1], ","))
	if err != nil {
		return err
	}
	listener, err := warden.Install()
	if err != nil {
		return err
	}
	// The filter sends this thread's sendmsg to the listener, which nobody
	// serves yet: another thread sends it, as init's does.
	sent := make(chan error)
	go func() {
		sent <- unix.Sendmsg(sock, []byte(strings.Join(locked, "\x00")+"\x00"), unix.UnixRights(listener), nil, 0)
	}()
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

// receiveListener receives the child's listener and the directories its
// Landlock domain grants.
func receiveListener(sock int) (int, []string, error) {
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, 0)
	if err != nil {
		return -1, nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, nil, fmt.Errorf("no descriptor (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, nil, fmt.Errorf("no descriptor (%v)", err)
	}
	var locked []string
	for _, d := range strings.Split(string(buf[:n]), "\x00") {
		if d != "" {
			locked = append(locked, d)
		}
	}
	return fds[0], locked, nil
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

// answer runs on one thread, as the warden's receiving worker does.
func answer(listener int, locked []string) {
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
		decode, ok := calls[int(n.nr)]
		if !ok {
			goOn(listener, n.id)
			continue
		}
		c := decode(n.args)
		t := task{pid: int(n.pid)}
		path, err := readPath(t.pid, c.path)
		if err != nil {
			send(listener, n.id, 0, unix.EFAULT)
			continue
		}
		if t.landsIn(c.dirfd, path, locked) {
			goOn(listener, n.id)
			continue
		}
		val, errno := t.carryOut(listener, n.id, c, path)
		if errno == unix.ENOENT && c.op == "open" && val == -1 {
			continue // the task is gone
		}
		send(listener, n.id, val, errno)
	}
}

func goOn(listener int, id uint64) {
	r := notifResp{id: id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

func send(listener int, id uint64, val int64, errno unix.Errno) {
	r := notifResp{id: id, val: val, error: -int32(errno)}
	ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r))
}

// A task is the sandboxed thread whose call the floor carries out.
type task struct{ pid int }

// dirPath is the /proc link of where a path given with dirfd starts.
func (t task) dirPath(dirfd int32, path string) string {
	proc := "/proc/" + strconv.Itoa(t.pid)
	switch {
	case filepath.IsAbs(path):
		return proc + "/root"
	case dirfd == cwd:
		return proc + "/cwd"
	}
	return proc + "/fd/" + strconv.Itoa(int(dirfd))
}

// landsIn reads a path as the warden's first look does, by its text: an
// absolute one as it is, a relative one from where its directory is.
func (t task) landsIn(dirfd int32, path string, dirs []string) bool {
	if !filepath.IsAbs(path) {
		d, err := os.Readlink(t.dirPath(dirfd, path))
		if err != nil {
			return false
		}
		path = filepath.Join(d, path)
	}
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// at opens where path starts; an absolute path is read from the task's
// root, inside which it resolves (RESOLVE_IN_ROOT).
func (t task) at(dirfd int32, path string) (base int, rel string, resolve uint64, err error) {
	base, err = unix.Open(t.dirPath(dirfd, path), unix.O_PATH|unix.O_CLOEXEC, 0)
	rel = path
	if filepath.IsAbs(path) {
		rel, resolve = "."+path, unix.RESOLVE_IN_ROOT
	}
	return base, rel, resolve, err
}

// parent opens the directory that holds path's last name.
func (t task) parent(dirfd int32, path string) (int, string, error) {
	base, rel, resolve, err := t.at(dirfd, path)
	if err != nil {
		return -1, "", err
	}
	defer unix.Close(base)
	fd, err := unix.Openat2(base, filepath.Dir(rel), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolve})
	return fd, filepath.Base(rel), err
}

// carryOut makes the call from outside, with the task's umask taken as 022,
// and returns what the task's call returns.
func (t task) carryOut(listener int, id uint64, c call, path string) (int64, unix.Errno) {
	switch c.op {
	case "open", "truncate":
		return t.open(listener, id, c, path)
	case "symlink":
		target, err := readPath(t.pid, c.target)
		if err != nil {
			return 0, unix.EFAULT
		}
		return t.make(c.dirfd, path, func(dir int, name string) error { return unix.Symlinkat(target, dir, name) })
	case "link", "rename":
		old, err := readPath(t.pid, c.path2)
		if err != nil {
			return 0, unix.EFAULT
		}
		oldDir, oldName, err := t.parent(c.dirfd2, old)
		if err != nil {
			return 0, errnoOf(err)
		}
		defer unix.Close(oldDir)
		return t.make(c.dirfd, path, func(dir int, name string) error {
			if c.op == "link" {
				return unix.Linkat(oldDir, oldName, dir, name, c.flags)
			}
			return unix.Renameat2(oldDir, oldName, dir, name, uint(c.flags))
		})
	case "mknod":
		return t.make(c.dirfd, path, func(dir int, name string) error { return unix.Mknodat(dir, name, c.mode&^0o022, int(c.dev)) })
	}
	return t.make(c.dirfd, path, func(dir int, name string) error { return unix.Mkdirat(dir, name, c.mode&^0o022) })
}

func (t task) make(dirfd int32, path string, act func(dir int, name string) error) (int64, unix.Errno) {
	dir, name, err := t.parent(dirfd, path)
	if err != nil {
		return 0, errnoOf(err)
	}
	defer unix.Close(dir)
	return 0, errnoOf(act(dir, name))
}

// open carries out an open, its descriptor installed in the task, or a
// truncate.
func (t task) open(listener int, id uint64, c call, path string) (int64, unix.Errno) {
	base, rel, resolve, err := t.at(c.dirfd, path)
	if err != nil {
		return 0, errnoOf(err)
	}
	defer unix.Close(base)
	flags := c.flags
	if c.op == "truncate" {
		flags = unix.O_WRONLY
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolve}
	if flags&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(c.mode &^ 0o022)
	}
	fd, err := unix.Openat2(base, rel, &how)
	if err != nil {
		return 0, errnoOf(err)
	}
	defer unix.Close(fd)
	if c.op == "truncate" {
		return 0, errnoOf(unix.Ftruncate(fd, c.length))
	}
	a := notifAddfd{id: id, srcfd: uint32(fd)}
	if flags&unix.O_CLOEXEC != 0 {
		a.newfdFlags = unix.O_CLOEXEC
	}
	got, errno := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&a))
	if errno != 0 {
		return -1, errno
	}
	return int64(got), 0
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
