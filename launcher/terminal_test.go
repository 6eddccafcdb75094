package launcher

import (
	"bytes"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// userTerminal is a pty standing for the user's terminal: the test types at
// its master and reads what the terminal shows there; slave is the
// terminal the launcher holds.
func userTerminal(t *testing.T) (master, slave int) {
	t.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("SKIPPING: no pty here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		t.Fatal(errno)
	}
	t.Cleanup(func() { unix.Close(m); unix.Close(int(s)) })
	return m, int(s)
}

// readSome reads what fd has. Nothing within a minute fails the test: the
// bytes were written before, so only a relay that took them can keep them.
func readSome(t *testing.T, fd int) []byte {
	t.Helper()
	if !readable(fd, 60000) {
		t.Fatal("nothing to read")
	}
	buf := make([]byte, 256)
	n, err := unix.Read(fd, buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}

// readable reports whether fd has something to read within ms milliseconds.
func readable(fd, ms int) bool {
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		if err != unix.EINTR {
			return err == nil && n == 1
		}
	}
}

// While the session is paused (stopped), the launcher reads nothing the
// user types: it stays in the user's terminal for the shell. Output the
// sandbox writes meanwhile reaches the terminal only once the session runs
// again. The terminal's modes are the user's whenever it is paused, and
// after the end.
func TestTerminalPauseReadsNothing(t *testing.T) {
	userM, userS := userTerminal(t)
	before, err := unix.IoctlGetTermios(userS, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	term, err := openTerminalOn([3]int{userS, userS, userS})
	if err != nil || term == nil {
		t.Fatalf("openTerminalOn = %v, %v", term, err)
	}
	// The sandbox's end: a copy of the slave, as bwrap would hold it.
	sandboxFD, err := unix.Dup(int(term.slave.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	sandbox := os.NewFile(uintptr(sandboxFD), "sandbox")
	defer sandbox.Close()
	raw := *before
	raw.Lflag &^= unix.ICANON | unix.ECHO | unix.ISIG
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(sandboxFD, unix.TCSETS, &raw); err != nil { // as Claude's interface does
		t.Fatal(err)
	}
	term.started()
	if err := term.takeKeys(); err != nil {
		t.Fatal(err)
	}

	unix.Write(userM, []byte("typed"))
	if got := readSome(t, sandboxFD); string(got) != "typed" {
		t.Fatalf("the sandbox got %q, want what was typed", got)
	}
	sandbox.Write([]byte("shown"))
	if got := readSome(t, userM); string(got) != "shown" {
		t.Fatalf("the terminal showed %q", got)
	}

	// pause returns only once the relay has stopped reading the terminal.
	paused := make(chan struct{})
	go func() {
		term.pause()
		close(paused)
	}()
	select {
	case <-paused:
	case <-time.After(time.Minute):
		t.Fatal("pause has not returned after a minute: the relay never stopped reading the terminal")
	}
	if m, _ := unix.IoctlGetTermios(userS, unix.TCGETS); *m != *before {
		t.Error("paused, the terminal does not have the user's modes")
	}
	unix.Write(userM, []byte("password\n"))
	sandbox.Write([]byte("later"))
	// A relay that still copied would take the keys and show the output in
	// this moment; a stopped one leaves both where they are.
	time.Sleep(200 * time.Millisecond)
	// The terminal shows only its own echo of the keys (in the user's
	// modes again), not what the sandbox wrote.
	if got := readSome(t, userM); string(got) != "password\r\n" {
		t.Fatalf("paused, the terminal showed %q, want only its echo of what was typed", got)
	}
	// The shell, reading the terminal now, gets every byte: the launcher
	// read none of it.
	if !readable(userS, 0) {
		t.Fatal("paused, the launcher took what was typed at the shell")
	}
	if got := readSome(t, userS); string(got) != "password\n" {
		t.Fatalf("the shell read %q from its terminal, want what was typed", got)
	}

	term.takeBack()
	term.unpause()
	if got := readSome(t, userM); !bytes.Equal(got, []byte("later")) {
		t.Fatalf("after the pause the terminal showed %q, want what the sandbox wrote meanwhile", got)
	}
	sandbox.Close()
	term.finish()
	if m, _ := unix.IoctlGetTermios(userS, unix.TCGETS); *m != *before {
		t.Error("after the end, the terminal does not have the user's modes")
	}
}
