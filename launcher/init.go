package launcher

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/warden"
	"golang.org/x/sys/unix"
)

// Init is `claude-sandbox init [--listen ADDR]... [--private DIR]... --
// COMMAND...`, what bwrap runs first in every sandbox. It runs under the
// same seccomp filter and namespaces as Claude, and in order:
//
//  1. opens a listening socket on each loopback ADDR of the sandbox's own
//     network namespace (allowlist mode) and hands it to the launcher, which
//     serves the proxies on it from outside, so no relay runs inside (ADR
//     0011);
//  2. installs the warden's filter and hands its listener to the launcher,
//     with the device numbers of the sandbox's own file systems (each
//     --private DIR), where the warden lets any name be made (ADR 0014);
//  3. waits until the launcher answers, and execs COMMAND (Claude).
//
// All of it happens before any code of Claude's runs, so what Init reports
// can be trusted. Without the launcher's answer Claude does not start. Init
// leaves no process behind.
func Init(args []string, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "claude-sandbox: init: "+format+"\n", a...)
		return ExitRefused
	}
	var listen, private, command []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			command = args[i+1:]
			i = len(args)
		case (a == "--listen" || a == "--private") && i+1 < len(args):
			if a == "--listen" {
				listen = append(listen, args[i+1])
			} else {
				private = append(private, args[i+1])
			}
			i++
		default:
			return fail("unexpected argument %q; the launcher runs init inside the sandbox", a)
		}
	}
	if len(command) == 0 {
		return fail("usage: claude-sandbox init [--listen ADDR]... [--private DIR]... -- COMMAND...; the launcher runs it inside the sandbox")
	}
	if !Inside() {
		return fail("runs only inside the sandbox, where the launcher starts it")
	}
	// The warden's filter belongs to this thread: install it and exec from
	// the same one.
	runtime.LockOSThread()
	f := os.NewFile(sandbox.ControlFD, "control")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return fail("descriptor %d is not the launcher's socket: %v", sandbox.ControlFD, err)
	}
	conn, ok := c.(*net.UnixConn)
	if !ok {
		return fail("descriptor %d is not a unix socket", sandbox.ControlFD)
	}
	defer conn.Close()
	for _, addr := range listen {
		if err := handOver(conn, addr); err != nil {
			return fail("%v", err)
		}
	}
	devs := make([]string, 0, len(private))
	for _, dir := range private {
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err != nil {
			return fail("cannot look at %s: %v", dir, err)
		}
		devs = append(devs, strconv.FormatUint(st.Dev, 10))
	}
	listener, err := warden.Install()
	if err != nil {
		return fail("%v", err)
	}
	msg := "warden " + strings.Join(devs, " ")
	if _, _, err := conn.WriteMsgUnix([]byte(msg), unix.UnixRights(listener), nil); err != nil {
		return fail("cannot hand the warden's listener to the launcher: %v", err)
	}
	unix.Close(listener)
	// The launcher answers once it serves everything; without the answer
	// Claude would start with no way out and no warden, so it does not.
	ack := make([]byte, 1)
	if n, err := conn.Read(ack); n != 1 || ack[0] != 'y' {
		return fail("the launcher could not start (%v)", err)
	}
	conn.Close()
	err = unix.Exec(command[0], command, os.Environ())
	return fail("cannot run %s: %v", command[0], err)
}

// handOver listens on addr and sends the listening socket to the launcher.
func handOver(conn *net.UnixConn, addr string) error {
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %v", addr, err)
	}
	defer l.Close()
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		return err
	}
	defer f.Close()
	if _, _, err := conn.WriteMsgUnix([]byte(addr), unix.UnixRights(int(f.Fd())), nil); err != nil {
		return fmt.Errorf("cannot hand %s to the launcher: %v", addr, err)
	}
	return nil
}
