package launcher

import (
	"fmt"
	"io"
	"net"
	"os"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// NetInit is `claude-sandbox net-init ADDR... -- COMMAND...`, what bwrap runs
// in allowlist mode. Inside the sandbox's own network namespace it opens a
// listening socket on each loopback ADDR, hands them to the launcher over
// the descriptor sandbox.NetFD, waits until the launcher serves them, and
// execs COMMAND (Claude). It runs under the same seccomp filter and
// namespaces as Claude and leaves no process behind; the launcher, outside,
// accepts on those sockets, so no relay runs inside (ADR 0011).
func NetInit(args []string, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "claude-sandbox: net-init: "+format+"\n", a...)
		return ExitRefused
	}
	var addrs, command []string
	for i, a := range args {
		if a == "--" {
			addrs, command = args[:i], args[i+1:]
			break
		}
	}
	if len(addrs) == 0 || len(command) == 0 {
		return fail("usage: claude-sandbox net-init ADDR... -- COMMAND...; the launcher runs it inside the sandbox")
	}
	if !Inside() {
		return fail("runs only inside the sandbox, where the launcher starts it")
	}
	f := os.NewFile(sandbox.NetFD, "net")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return fail("descriptor %d is not the launcher's socket: %v", sandbox.NetFD, err)
	}
	conn, ok := c.(*net.UnixConn)
	if !ok {
		return fail("descriptor %d is not a unix socket", sandbox.NetFD)
	}
	defer conn.Close()
	for _, addr := range addrs {
		if err := handOver(conn, addr); err != nil {
			return fail("%v", err)
		}
	}
	// The launcher answers once it serves every socket; without the answer
	// Claude would start with no way out, so it does not start.
	ack := make([]byte, 1)
	if n, err := conn.Read(ack); n != 1 || ack[0] != 'y' {
		return fail("the launcher could not start the proxies (%v)", err)
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
