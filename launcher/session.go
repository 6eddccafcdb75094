package launcher

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A job is the session as the user's shell sees it: the launcher is the
// shell's job, and stops and continues the sandbox on the shell's behalf.
// When the launcher has a terminal (its own pty relays it, or it has only a
// controlling terminal), bwrap runs in a session of its own, so nothing of
// the sandbox has the user's terminal as its controlling terminal, and the
// signals the terminal sends the launcher's process group reach only the
// launcher, which passes them on (ADR 0019).
type job struct {
	bwrap *os.Process
	term  *terminal     // the launcher's pty; nil when no descriptor is a terminal
	init  *net.UnixConn // init's reports on the job, with term
	sigs  chan os.Signal
	// own is set when bwrap leads a session of its own: the terminal's
	// ^C, ^\ and ^Z reach only the launcher, which passes them on.
	own bool
	// unanswered counts the "signal" messages init has not answered: a
	// stop it reports meanwhile happened before the signal was sent.
	unanswered int
	exited     bool // init reported the job's end
}

// notify catches what the launcher handles for the job, beyond SIGINT,
// SIGQUIT, SIGTERM and SIGHUP (which it always catches).
func (j *job) notify() {
	if j.own {
		signal.Notify(j.sigs, syscall.SIGTSTP, syscall.SIGCONT)
	}
	if j.term != nil {
		signal.Notify(j.sigs, syscall.SIGWINCH)
		signal.Notify(j.sigs, fatalSignals...)
	}
}

// fatalSignals end a Go program with a crash when another process sends
// them (kill -ABRT): with the terminal in raw mode, the launcher gives it
// its modes back first, and then dies of it.
var fatalSignals = []os.Signal{syscall.SIGABRT, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGSEGV, syscall.SIGSTKFLT, syscall.SIGSYS, syscall.SIGTRAP}

// signal handles one signal of the launcher's other than SIGTERM and SIGHUP.
// It returns the signal when it passed it on to bwrap's process group.
func (j *job) signal(sig syscall.Signal) syscall.Signal {
	switch sig {
	case syscall.SIGINT, syscall.SIGQUIT:
		// Held raw, the user's terminal sends no ^C: the pty does, to the
		// job. Otherwise the terminal sent it to the launcher's group,
		// where bwrap used to be: it goes to bwrap's.
		if j.own && (j.term == nil || !j.term.holdsRaw()) {
			_ = unix.Kill(-j.bwrap.Pid, sig)
			return sig
		}
	case syscall.SIGTSTP:
		// ^Z at a terminal the launcher does not hold raw, or a kill -TSTP.
		if j.term != nil {
			j.stop(sig, true)
			return 0
		}
		// bwrap's group, in a session of its own, is orphaned: the kernel
		// would discard SIGTSTP sent to it.
		_ = unix.Kill(-j.bwrap.Pid, syscall.SIGSTOP)
		j.stopSelf(sig)
		_ = unix.Kill(-j.bwrap.Pid, syscall.SIGCONT)
	case syscall.SIGCONT:
		// Continued after a stop the launcher did not take itself (a
		// SIGSTOP): the shell may have changed the terminal's modes.
		if j.term != nil {
			j.term.reapply()
			j.term.resized()
		} else {
			_ = unix.Kill(-j.bwrap.Pid, syscall.SIGCONT)
		}
	case syscall.SIGWINCH:
		j.term.resized()
	case syscall.SIGABRT, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL, syscall.SIGSEGV, syscall.SIGSTKFLT, syscall.SIGSYS, syscall.SIGTRAP:
		j.term.close()
		var dfl sigaction
		_ = setSigaction(sig, &dfl, nil)
		runtime.LockOSThread()
		_ = unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
	}
	return 0
}

// report handles one message of init's. It returns false once init has
// closed the socket without the job having ended: then the launcher ends
// the session, since it would no longer learn when the job stops.
func (j *job) report(msg []byte, ok bool) bool {
	if !ok {
		return j.exited
	}
	var sig int
	switch {
	case bytes.Equal(msg, []byte(msgExited)):
		j.exited = true
	case bytes.Equal(msg, []byte(msgDone)):
		j.unanswered--
	case j.unanswered == 0:
		if _, err := fmt.Sscanf(string(msg), msgStopped+" %d", &sig); err == nil && stopSignals[syscall.Signal(sig)] {
			j.stop(syscall.Signal(sig), false)
		}
	}
	return true
}

// stopSignals are the signals that stop a process.
var stopSignals = map[syscall.Signal]bool{syscall.SIGTSTP: true, syscall.SIGTTIN: true, syscall.SIGTTOU: true, syscall.SIGSTOP: true}

// stop takes the session out of the foreground because the job stopped
// with sig (or, with ask, because the launcher got sig and init must stop
// the job): the copying stops, the terminal gets its modes back, and the
// launcher stops itself with the same signal, so the user's shell sees its
// job stop and takes the terminal. When the shell continues the launcher
// (fg), the terminal is raw again and resized, the job continues, and the
// copying resumes. Continued in the background (bg), the launcher stops
// again on taking the terminal (SIGTTOU), before the job continues.
func (j *job) stop(sig syscall.Signal, ask bool) {
	j.term.pause()
	if ask {
		j.ask(syscall.SIGTSTP)
	}
	j.stopSelf(sig)
	j.term.takeBack()
	j.ask(syscall.SIGCONT)
	j.term.unpause()
}

// ask has init send sig to the job's process group.
func (j *job) ask(sig syscall.Signal) {
	if _, err := j.init.Write([]byte(fmt.Sprintf("%s %d", msgSignal, int(sig)))); err == nil {
		j.unanswered++
	}
}

// stopSelf stops the launcher with sig, as the kernel stops a process for
// a stop signal left to its default action: the user's shell sees its job
// stop with that signal. It returns once the launcher runs again (or at
// once when the kernel discards the signal, as it does for a process group
// orphaned of its parent's session).
//
// Once caught, SIGTSTP keeps Go's handler even after signal.Reset, and a
// handled SIGTSTP stops nothing: so for the moment of the kill the
// launcher puts the default action back itself, and sends the signal to
// its own thread, which takes it before the kill returns.
func (j *job) stopSelf(sig syscall.Signal) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if sig != syscall.SIGSTOP {
		var dfl, old sigaction // SIG_DFL
		if err := setSigaction(sig, &dfl, &old); err != nil {
			sig = syscall.SIGSTOP
		} else {
			defer setSigaction(sig, &old, nil)
		}
	}
	_ = unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
}

// sigaction is the kernel's struct sigaction on amd64 and arm64: handler,
// flags, restorer, mask.
type sigaction [4]uintptr

func setSigaction(sig syscall.Signal, act, old *sigaction) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// readReports delivers init's messages until it closes the socket.
func readReports(conn *net.UnixConn) <-chan []byte {
	out := make(chan []byte)
	go func() {
		defer close(out)
		for {
			buf := make([]byte, 64)
			n, err := conn.Read(buf)
			if err != nil || n == 0 {
				return
			}
			out <- buf[:n]
		}
	}()
	return out
}

// hasControllingTerminal reports whether the launcher has a controlling
// terminal, which anything in its session could open as /dev/tty.
func hasControllingTerminal() bool {
	fd, err := unix.Open("/dev/tty", unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.ENXIO {
		return false
	}
	if err == nil {
		unix.Close(fd)
	}
	return true
}
