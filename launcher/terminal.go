package launcher

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A terminal is the user's terminal as the launcher holds it for a session
// (ADR 0019). The sandbox never gets the user's terminal: each of its
// descriptors 0..2 that is a terminal is replaced by the slave of a pty the
// launcher opens, and the launcher copies bytes between the two while the
// session is in the foreground. Once Claude stops or ends, the copying
// stops before the user's shell gets its terminal back, so nothing inside
// reads what the user types there, nor writes to it.
type terminal struct {
	in     int      // the user's terminal the keys come from: stdin, or -1 when stdin is not a terminal
	out    int      // the user's terminal the output goes to: stdout, else stderr, else stdin
	master *os.File // the launcher's end, non-blocking (never enters the sandbox): copyIn writes it through Go's poller, so a deadline can stop a write to a full pty
	ptmx   int      // the same descriptor, for reads and ioctls (os.File.Fd would make it blocking)
	slave  *os.File // the sandbox's end, closed by the launcher once bwrap has it
	isTTY  [3]bool  // which of descriptors 0..2 are the user's terminal
	wake   int      // an eventfd that interrupts copyIn's poll

	closeOnce sync.Once
	mu        sync.Mutex
	changed   *sync.Cond
	saved     *unix.Termios // in's modes when the launcher took it
	rawModes  *unix.Termios // the raw modes made of them
	raw       bool          // in is in raw mode
	paused    bool          // copying stops: the session is not in the foreground
	inClosed  bool          // copyIn ends
	inStarted bool          // copyIn runs
	inIdle    bool          // copyIn is not between a read of in and its write to the pty
	inDone    chan struct{}
	outDone   chan struct{}
	pending   []byte // copyOut's last read, held while paused
}

// openTerminal opens the pty when any of descriptors 0..2 is a terminal,
// with the user's terminal modes and window size. It returns nil when none
// is: such a session runs as it always did.
func openTerminal() (*terminal, error) {
	return openTerminalOn([3]int{0, 1, 2})
}

// openTerminalOn is openTerminal with fds standing for descriptors 0..2.
func openTerminalOn(fds [3]int) (*terminal, error) {
	t := &terminal{in: -1, out: -1, wake: -1}
	var modes *unix.Termios
	for i, fd := range fds {
		m, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			continue
		}
		if modes == nil || i == 0 {
			modes = m
		}
		t.isTTY[i] = true
	}
	if modes == nil {
		return nil, nil
	}
	if t.isTTY[0] {
		t.in = fds[0]
	}
	for _, i := range []int{1, 2, 0} {
		if t.isTTY[i] {
			t.out = fds[i]
			break
		}
	}
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open a pty for the session's terminal (/dev/ptmx): %w", err)
	}
	if err := t.setUp(master, modes); err != nil {
		unix.Close(master)
		if t.slave != nil {
			t.slave.Close()
		}
		return nil, err
	}
	t.changed = sync.NewCond(&t.mu)
	t.inIdle = true
	t.inDone, t.outDone = make(chan struct{}), make(chan struct{})
	return t, nil
}

func (t *terminal) setUp(master int, modes *unix.Termios) error {
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		return fmt.Errorf("cannot unlock the pty: %w", err)
	}
	// The slave straight from the master, never by its name in /dev/pts.
	slave, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(master), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		return fmt.Errorf("cannot open the pty's slave: %w", errno)
	}
	t.slave = os.NewFile(slave, "pty")
	if err := unix.IoctlSetTermios(int(slave), unix.TCSETS, modes); err != nil {
		return fmt.Errorf("cannot give the pty the terminal's modes: %w", err)
	}
	t.copySize(master)
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	t.wake = wake
	if err := unix.SetNonblock(master, true); err != nil {
		return err
	}
	t.ptmx = master
	t.master = os.NewFile(uintptr(master), "ptmx")
	return nil
}

// stdio is what bwrap gets as descriptors 0..2: the pty's slave in place of
// each terminal, the launcher's own descriptor otherwise.
func (t *terminal) stdio() [3]*os.File {
	out := [3]*os.File{os.Stdin, os.Stdout, os.Stderr}
	for fd, tty := range t.isTTY {
		if tty {
			out[fd] = t.slave
		}
	}
	return out
}

// started closes the launcher's copy of the slave, so the pty reports its
// end once the sandbox has closed its copies, and starts copying output.
func (t *terminal) started() {
	t.slave.Close()
	go t.copyOut()
}

// takeKeys puts the user's terminal in raw mode, so every key reaches the
// pty and its line discipline acts on it as the terminal would have (^C,
// ^Z, erase), and starts copying keys. When the launcher is in the
// background, setting the modes stops it (SIGTTOU) until the shell gives it
// the terminal.
func (t *terminal) takeKeys() error {
	if t.in < 0 {
		return nil
	}
	if err := t.makeRaw(); err != nil {
		return err
	}
	t.mu.Lock()
	t.inStarted = true
	t.mu.Unlock()
	go t.copyIn()
	return nil
}

// makeRaw saves in's modes as the user's shell left them and puts it in
// raw mode.
func (t *terminal) makeRaw() error {
	if t.in < 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.raw {
		return nil
	}
	saved, err := unix.IoctlGetTermios(t.in, unix.TCGETS)
	if err != nil {
		return fmt.Errorf("cannot read the terminal's modes: %w", err)
	}
	raw := *saved
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(t.in, unix.TCSETS, &raw); err != nil {
		return fmt.Errorf("cannot put the terminal in raw mode: %w", err)
	}
	t.saved, t.rawModes, t.raw = saved, &raw, true
	return nil
}

// restore gives the user's terminal back the modes it had. Every way out of
// a session and every stop passes here.
func (t *terminal) restore() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.raw {
		return
	}
	_ = unix.IoctlSetTermios(t.in, unix.TCSETS, t.saved)
	t.raw = false
}

// holdsRaw reports whether the launcher holds the user's terminal in raw
// mode: then the terminal itself sends no ^C or ^Z, the pty does.
func (t *terminal) holdsRaw() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.raw
}

// pause stops the copying, for a stop of the session: once it returns,
// copyIn reads nothing more from the user's terminal and copyOut writes
// nothing the sandbox writes from now on; what it writes waits in the pty.
// Then the terminal gets its modes back.
func (t *terminal) pause() {
	t.mu.Lock()
	t.paused = true
	t.mu.Unlock()
	t.interrupt()
	t.mu.Lock()
	for !t.inIdle {
		t.changed.Wait()
	}
	t.mu.Unlock()
	t.restore()
}

// takeBack takes the terminal again after the user's shell gave it back:
// raw mode (which stops the launcher while it is in the background, until
// the shell puts it in the foreground) and the window size as it is now.
func (t *terminal) takeBack() {
	_ = t.makeRaw()
	t.resized()
}

// unpause copies again.
func (t *terminal) unpause() {
	_ = t.master.SetWriteDeadline(time.Time{})
	t.mu.Lock()
	t.paused = false
	t.changed.Broadcast()
	t.mu.Unlock()
}

// reapply puts the terminal in raw mode again if the launcher holds it so:
// after a stop the launcher did not take itself (SIGSTOP), the shell may
// have set its own modes.
func (t *terminal) reapply() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.raw {
		_ = unix.IoctlSetTermios(t.in, unix.TCSETS, t.rawModes)
	}
}

// interrupt wakes copyIn from its poll or from a write to a full pty.
// (copyOut needs no waking: it looks whether the copying is paused after
// each read.)
func (t *terminal) interrupt() {
	_ = t.master.SetWriteDeadline(time.Unix(1, 0))
	_, _ = unix.Write(t.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
}

// resized copies the user's terminal's window size to the pty, whose line
// discipline signals the job (SIGWINCH) when it changed.
func (t *terminal) resized() {
	t.copySize(t.ptmx)
}

func (t *terminal) copySize(master int) {
	for _, fd := range []int{t.out, t.in} {
		if fd < 0 {
			continue
		}
		if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil {
			_ = unix.IoctlSetWinsize(master, unix.TIOCSWINSZ, ws)
			return
		}
	}
}

// finish ends the session's terminal once bwrap has ended: no more keys,
// the output the sandbox left in the pty, then close.
func (t *terminal) finish() {
	t.mu.Lock()
	t.inClosed = true
	t.paused = false
	t.changed.Broadcast()
	started := t.inStarted
	t.mu.Unlock()
	t.interrupt()
	if started {
		<-t.inDone
	}
	<-t.outDone // every copy of the slave is closed: the pty reports its end
	t.close()
}

// close gives the user's terminal its modes back and closes the pty. Every
// way out of a launch passes here.
func (t *terminal) close() {
	if t == nil {
		return
	}
	t.closeOnce.Do(func() {
		t.restore()
		t.slave.Close() // once bwrap started, already closed: a second Close only fails
		t.master.Close()
		unix.Close(t.wake)
	})
}

// waitUnpaused waits while the session is stopped, idle meanwhile; false
// once the terminal's input is closed.
func (t *terminal) waitUnpaused() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.paused && !t.inClosed {
		t.inIdle = true
		t.changed.Broadcast()
		t.changed.Wait()
	}
	if t.inClosed {
		return false
	}
	t.inIdle = false
	return true
}

// copyIn copies keys from the user's terminal to the pty. It polls before
// each read, so that pause can stop it between reads: it never reads the
// terminal while the session is stopped.
func (t *terminal) copyIn() {
	defer func() {
		t.mu.Lock()
		t.inIdle = true
		t.changed.Broadcast()
		t.mu.Unlock()
		close(t.inDone)
	}()
	buf := make([]byte, 4096)
	var unsent []byte
	fds := []unix.PollFd{{Fd: int32(t.in), Events: unix.POLLIN}, {Fd: int32(t.wake), Events: unix.POLLIN}}
	for t.waitUnpaused() {
		if len(unsent) > 0 {
			n, err := t.master.Write(unsent)
			unsent = unsent[n:]
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				unsent = nil
			}
			continue
		}
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return
		}
		if fds[1].Revents != 0 {
			var b [8]byte
			_, _ = unix.Read(t.wake, b[:])
			continue
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(t.in, buf)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			continue
		case err != nil || n == 0:
			return // the terminal is gone (hung up): nothing more to copy
		}
		unsent = append(unsent[:0], buf[:n]...)
	}
}

// copyOut copies what the sandbox writes to its terminal to the user's,
// until every copy of the slave is closed. What it reads while paused it
// keeps until the session is in the foreground again.
func (t *terminal) copyOut() {
	defer close(t.outDone)
	buf := make([]byte, 32<<10)
	for {
		t.mu.Lock()
		for t.paused {
			t.changed.Wait()
		}
		data := t.pending
		t.pending = nil
		t.mu.Unlock()
		if len(data) == 0 {
			n, err := t.readOutput(buf)
			if err != nil {
				return // EIO: the sandbox has closed the pty
			}
			t.mu.Lock()
			if t.paused {
				t.pending = append([]byte(nil), buf[:n]...)
				t.mu.Unlock()
				continue
			}
			t.mu.Unlock()
			data = buf[:n]
		}
		writeAll(t.out, data)
	}
}

// readOutput waits for the pty's output and reads it, on copyOut's own
// thread rather than through Go's poller: a pty hands its output over a
// few kilobytes at a time, and this costs one poll and one read for each.
func (t *terminal) readOutput(buf []byte) (int, error) {
	for {
		if _, err := unix.Poll([]unix.PollFd{{Fd: int32(t.ptmx), Events: unix.POLLIN}}, -1); err != nil && err != unix.EINTR {
			return 0, err
		}
		n, err := unix.Read(t.ptmx, buf)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		default:
			return n, nil
		}
	}
}

// writeAll writes to the user's terminal, whose descriptor is shared with
// the shell and may have been left non-blocking by another program.
func writeAll(fd int, b []byte) {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		switch {
		case err == unix.EAGAIN:
			_, _ = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}, -1)
		case err == unix.EINTR:
		case err != nil:
			return // the terminal is gone; what the sandbox writes is dropped
		default:
			b = b[n:]
		}
	}
}

// messages is where the launcher writes its own messages during a session:
// while the terminal is raw, a newline needs its carriage return.
func (t *terminal) messages(w io.Writer) io.Writer {
	if t == nil || !t.isTTY[2] {
		return w
	}
	return &rawSafe{w: w, t: t}
}

type rawSafe struct {
	w io.Writer
	t *terminal
}

func (r *rawSafe) Write(b []byte) (int, error) {
	if !r.t.holdsRaw() {
		return r.w.Write(b)
	}
	out := make([]byte, 0, len(b)+8)
	for _, c := range b {
		if c == '\n' {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
