package verify

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// terminalPrivate: nothing inside has a terminal of the user's. A session
// with a terminal gets the launcher's pty instead: the controlling terminal
// of a session that init leads inside the sandbox, which the launcher
// relays only while the session is in the foreground. The user's terminal
// is the controlling terminal of a session led outside (their shell), so
// no process inside may have it as its own, nor hold it open (as a process
// that reopened Claude's terminal through /proc would).
func terminalPrivate(f *facts) (string, error) {
	if f.procsErr != nil {
		return "", f.procsErr
	}
	// The sandbox's own ptys, made inside, are on its own devpts.
	inner := ^uint64(0)
	var st unix.Stat_t
	if unix.Stat("/dev/pts/ptmx", &st) == nil {
		inner = st.Dev
	}
	own := map[uint64]int{} // controlling terminals of sessions led inside: device → session
	for _, p := range f.procs {
		if p.tty == 0 {
			continue
		}
		if p.session == 0 {
			return "", fmt.Errorf("process %d (%s) has a controlling terminal (%s) whose session is led outside the sandbox: the user's terminal", p.pid, p.comm, devName(p.tty))
		}
		own[ttyDev(p.tty)] = p.session
	}
	held := 0
	for _, p := range f.procs {
		dir := "/proc/" + strconv.Itoa(p.pid) + "/fd/"
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or not ours to look at (init, which holds only the pty)
		}
		for _, e := range entries {
			var st unix.Stat_t
			if unix.Stat(dir+e.Name(), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Dev == inner || !isTerminal(st.Rdev) {
				continue
			}
			held++
			if _, ok := own[ttyDev(st.Rdev)]; !ok {
				return "", fmt.Errorf("process %d (%s) holds a terminal (%s, descriptor %s) that is no session's inside the sandbox: the user's", p.pid, p.comm, devName(st.Rdev), e.Name())
			}
		}
	}
	if len(own) == 0 && held == 0 {
		return "no terminal inside: this session was started without one", nil
	}
	sessions := ""
	for _, s := range own {
		sessions += " " + strconv.Itoa(s)
	}
	return fmt.Sprintf("the terminal inside is the launcher's pty, the controlling terminal of session%s led inside; %d open descriptors of terminals, all of it", sessions, held), nil
}

// isTerminal is true for the device numbers of terminals: pty slaves
// (136-143), virtual consoles and serial lines (4), old BSD ptys (3) and
// /dev/console (5:1). /dev/tty (5:0) names whatever terminal its opener
// controlled, and is judged by that.
func isTerminal(rdev uint64) bool {
	major, minor := unix.Major(rdev), unix.Minor(rdev)
	return (major >= 136 && major <= 143) || major == 3 || major == 4 || (major == 5 && minor == 1)
}

// ttyDev makes stat's device numbers and /proc's tty_nr comparable.
func ttyDev(dev uint64) uint64 {
	return unix.Mkdev(unix.Major(dev), unix.Minor(dev))
}

func devName(dev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev))
}
