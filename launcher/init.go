package launcher

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/warden"
	"golang.org/x/sys/unix"
)

// Init is `claude-sandbox init [--listen ADDR]... [--private DIR]... --
// COMMAND...` (the cli parses the flags), what bwrap runs first in every
// sandbox. It runs under the same seccomp filter and namespaces as Claude,
// and in order:
//
//  1. opens a listening socket on each loopback ADDR of the sandbox's own
//     network namespace (allowlist mode) and hands it to the launcher, which
//     serves the proxies on it from outside, so no relay runs inside (ADR
//     0011);
//  2. scopes the sandbox to its own abstract unix sockets with Landlock
//     where the kernel can, starts the warden's socket helper, locks the
//     sandbox's files with Landlock where the kernel can (ADR 0040),
//     installs the warden's filter and hands its listener and the helper's
//     socket to the launcher, with the device numbers of the sandbox's own
//     file systems (each --private DIR), where the warden lets any name be
//     made (ADR 0014, 0021), and of those the kernel's lock grants;
//  3. waits until the launcher answers, and execs COMMAND (Claude); or, when
//     the answer says the launcher relays a terminal through its own pty
//     (descriptors 0..2 hold the pty's slave), runs COMMAND as the pty's
//     foreground job and reports its stops to the launcher (runJob).
//
// All of it happens before any code of Claude's runs, so what Init reports
// can be trusted. Without the launcher's answer Claude does not start. Init
// leaves no process behind.
func Init(listen, private, command []string, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "claude-sandbox: init: "+format+"\n", a...)
		return host.ExitRefused
	}
	if !host.Inside() {
		return fail("runs only inside the sandbox, where the launcher starts it")
	}
	// The warden's filter belongs to this thread: install it and exec from
	// the same one.
	runtime.LockOSThread()
	conn, err := controlConn()
	if err != nil {
		return fail("%v", err)
	}
	defer conn.Close()
	for _, addr := range listen {
		if err := handOver(conn, addr); err != nil {
			return fail("%v", err)
		}
	}
	// Landlock keeps the sandbox to the abstract unix sockets it makes
	// itself, where the kernel can; elsewhere the warden refuses abstract
	// names in the container's namespace (ADR 0024).
	scope := scopeOn
	if err := warden.ScopeAbstractSockets(); err != nil {
		scope = scopeOff
	}
	helper, err := startSocketHelper()
	if err != nil {
		return fail("cannot start the socket helper: %v", err)
	}
	// The kernel's lock on files comes after the helper starts, which
	// binds for the warden where the warden decided it may, and holds for
	// Claude and everything it runs (ADR 0040).
	files, err := lockFiles(private)
	if err != nil {
		return fail("%v", err)
	}
	listener, err := warden.Install()
	if err != nil {
		return fail("%v", err)
	}
	// The filter sends this thread's sendmsg to the warden, which is not
	// served before the listener arrives: another thread, which has no
	// filter of the warden's, sends it.
	msg := strings.Join(append([]string{"warden", scope}, files...), " ")
	sent := make(chan error)
	go func() {
		_, _, err := conn.WriteMsgUnix([]byte(msg), unix.UnixRights(listener, helper), nil)
		sent <- err
	}()
	if err := <-sent; err != nil {
		return fail("cannot hand the warden's listener to the launcher: %v", err)
	}
	unix.Close(listener)
	unix.Close(helper)
	// The launcher answers once it serves everything; without the answer
	// Claude would start with no way out and no warden, so it does not.
	ack := make([]byte, 1)
	n, err := conn.Read(ack)
	switch {
	case n == 1 && ack[0] == answerTerminal:
		return runJob(conn, command, fail)
	case n != 1 || ack[0] != answerExec:
		return fail("the launcher could not start (%v)", err)
	}
	// The launcher gives the sandbox a terminal only through its own pty,
	// and then answers answerTerminal: any other terminal here would be the
	// user's.
	if fd := terminalFD(); fd >= 0 {
		return fail("descriptor %d is a terminal the launcher did not relay", fd)
	}
	conn.Close()
	err = unix.Exec(command[0], command, os.Environ())
	return fail("cannot run %s: %v", command[0], err)
}

// What init tells the launcher of Landlock's scope on abstract unix
// sockets, after "warden".
const (
	scopeOn  = "abstract-scoped"
	scopeOff = "abstract-unscoped"
)

// lockedField, after the scope, is followed by the device numbers of the
// sandbox's own file systems that the kernel's lock grants (LockFiles),
// comma-separated, none when it grants none.
const lockedField = "locked="

// helperFD is the descriptor the warden's socket helper serves on
// (SocketHelper), which init starts with sandbox.SocketHelperArg.
const helperFD = 3

// SocketHelper is init's child, the warden's socket helper
// (warden/helper.go), serving on helperFD.
func SocketHelper(stderr io.Writer) int {
	if !host.Inside() {
		fmt.Fprintln(stderr, "claude-sandbox: init: the socket helper runs only inside the sandbox")
		return host.ExitRefused
	}
	if err := warden.ServeHelper(helperFD); err != nil {
		fmt.Fprintf(stderr, "claude-sandbox: init: socket helper: %v\n", err)
		return host.ExitRefused
	}
	return 0
}

// startSocketHelper starts the warden's socket helper (warden/helper.go):
// this binary again, from this thread, so in its Landlock domain but
// before the warden's filter; in a session of its own, so that no key
// typed at a terminal signals it. It returns the launcher's end of its
// connection.
func startSocketHelper() (int, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(fds[1])
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		unix.Close(fds[0])
		return -1, err
	}
	defer null.Close()
	n := null.Fd()
	_, err = syscall.ForkExec("/proc/self/exe", []string{"claude-sandbox", "init", sandbox.SocketHelperArg}, &syscall.ProcAttr{
		Env:   []string{},
		Files: []uintptr{n, n, n, uintptr(fds[1])},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		unix.Close(fds[0])
		return -1, err
	}
	return fds[0], nil
}

// The launcher's answer on the control socket, once it serves everything.
const (
	answerExec     = 'y' // run Claude in init's place
	answerTerminal = 't' // descriptors 0..2 hold the launcher's pty: run Claude as its foreground job (runJob)
)

// What init and the launcher say to each other while a job runs on the
// launcher's pty, one message a packet.
const (
	msgStopped = "stopped" // init: "stopped N", the job stopped with signal N
	msgExited  = "exited"  // init: the job ended; init ends next
	msgSignal  = "signal"  // launcher: "signal N", send signal N to the job's process group
	msgDone    = "done"    // init: the last "signal" was sent; what init reports next happened after it
)

// jobSignals are the signals the launcher may have init send to the job:
// the job control the user's shell would do.
var jobSignals = map[unix.Signal]bool{unix.SIGTSTP: true, unix.SIGCONT: true}

// terminalFD is the first of descriptors 0, 1 and 2 that is a terminal, or -1.
func terminalFD() int {
	for fd := 0; fd <= 2; fd++ {
		if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
			return fd
		}
	}
	return -1
}

// runJob runs command the way a shell runs a job, on the launcher's pty:
// init leads a session of its own whose controlling terminal is the pty,
// so the pty's line discipline signals the job (^C, ^\, ^Z, a new window
// size); the job gets a process group of its own, in the pty's foreground.
// Its parent, init, stays in the session but outside that group: a group
// with no parent in its session but outside it is orphaned, and the kernel
// discards the stop signals (Claude's own ^Z) sent to such a group.
//
// Init waits for the job and tells the launcher each time it stops, so the
// launcher stops too and the user's shell gets its terminal back; and it
// sends the job what the launcher asks (SIGCONT on `fg`). It ends with the
// job's status (128+N for a signal, as bwrap reports it). The control
// socket is the launcher's: init makes itself undumpable first, so nothing
// inside can trace it or open its descriptors.
func runJob(conn *net.UnixConn, command []string, fail func(string, ...any) int) int {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail("prctl(PR_SET_DUMPABLE): %v", err)
	}
	tty := terminalFD()
	if tty < 0 {
		return fail("the launcher relays a terminal, but none of descriptors 0, 1 and 2 is one")
	}
	if _, err := unix.Setsid(); err != nil {
		return fail("setsid: %v", err)
	}
	if err := unix.IoctlSetInt(tty, unix.TIOCSCTTY, 0); err != nil {
		return fail("cannot make the pty this session's terminal: %v", err)
	}
	changed := make(chan os.Signal, 1)
	signal.Notify(changed, unix.SIGCHLD)
	// Forked from this thread, which holds the warden's filter.
	pid, err := syscall.ForkExec(command[0], command, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Foreground: true, Ctty: tty},
	})
	if err != nil {
		return fail("cannot run %s: %v", command[0], err)
	}
	asked := readAsked(conn)
	say := func(msg string) { _, _ = conn.Write([]byte(msg)) }
	report := func() (int, bool) { return reportJob(pid, say) }
	for {
		select {
		case <-changed:
			if code, ended := report(); ended {
				return code
			}
		case msg, ok := <-asked:
			if !ok {
				// The launcher is gone: so is the job.
				_ = unix.Kill(-pid, unix.SIGKILL)
				return host.ExitRefused
			}
			// One goroutine reports and signals, so every stop reported
			// before "done" happened before the signal was sent.
			if code, ended := report(); ended {
				return code
			}
			var sig int
			if _, err := fmt.Sscanf(msg, msgSignal+" %d", &sig); err == nil && jobSignals[unix.Signal(sig)] {
				_ = unix.Kill(-pid, unix.Signal(sig))
			}
			say(msgDone)
		}
	}
}

// readAsked passes on what the launcher asks of the job, until it is gone.
func readAsked(conn *net.UnixConn) <-chan string {
	asked := make(chan string)
	go func() {
		defer close(asked)
		buf := make([]byte, 64)
		for {
			n, err := conn.Read(buf)
			if err != nil || n == 0 {
				return
			}
			asked <- string(buf[:n])
		}
	}()
	return asked
}

// reportJob tells the launcher, through say, what happened to the job pid
// since it last looked; it returns the job's status once the job has
// ended.
func reportJob(pid int, say func(string)) (int, bool) {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG|unix.WUNTRACED, nil)
		if err == unix.EINTR {
			continue
		}
		switch {
		case err != nil || got != pid:
			return 0, false
		case ws.Stopped():
			say(fmt.Sprintf("%s %d", msgStopped, ws.StopSignal()))
		case ws.Exited():
			say(msgExited)
			return ws.ExitStatus(), true
		case ws.Signaled():
			say(msgExited)
			return 128 + int(ws.Signal()), true
		}
	}
}

// controlConn is init's end of the launcher's control socket.
func controlConn() (*net.UnixConn, error) {
	f := os.NewFile(sandbox.ControlFD, "control")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("descriptor %d is not the launcher's socket: %v", sandbox.ControlFD, err)
	}
	conn, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("descriptor %d is not a unix socket", sandbox.ControlFD)
	}
	return conn, nil
}

// devices are the device numbers of the sandbox's own file systems, as the
// warden's message gives them.
func devices(private []string) ([]string, error) {
	devs := make([]string, 0, len(private))
	for _, dir := range private {
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err != nil {
			return nil, fmt.Errorf("cannot look at %s: %v", dir, err)
		}
		devs = append(devs, strconv.FormatUint(st.Dev, 10))
	}
	return devs, nil
}

// lockFiles locks the sandbox's files (warden.LockFiles) and returns what
// init tells the launcher of its file systems: lockedField and the device
// numbers of those locked, then those of all of them.
func lockFiles(private []string) ([]string, error) {
	locked, _, err := warden.LockFiles(private)
	if err != nil {
		return nil, err
	}
	lockedDevs, err := devices(locked)
	if err != nil {
		return nil, err
	}
	devs, err := devices(private)
	if err != nil {
		return nil, err
	}
	return append([]string{lockedField + strings.Join(lockedDevs, ",")}, devs...), nil
}

// handOver listens on addr and sends the listening socket to the launcher.
func handOver(conn *net.UnixConn, addr string) error {
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	defer l.Close()
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		return err
	}
	defer f.Close()
	if _, _, err := conn.WriteMsgUnix([]byte(addr), unix.UnixRights(int(f.Fd())), nil); err != nil {
		return fmt.Errorf("cannot hand %s to the launcher: %w", addr, err)
	}
	return nil
}
