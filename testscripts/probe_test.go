package testscripts

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probe performs one attempt from inside the sandbox and reports it on
// stdout. It exits 0 when the attempt succeeded and 1 when it was refused,
// so scripts can say `! exec claude $PROBE connect sock`.
func probe(args []string) int {
	if len(args) == 0 {
		fmt.Println("usage: probe CHECK [ARG]")
		return 2
	}
	arg := ""
	if len(args) > 1 {
		arg = args[1]
	}
	err := probes[args[0]](arg)
	if err != nil {
		fmt.Printf("%s: refused: %v\n", args[0], err)
		return 1
	}
	return 0
}

var probes = map[string]func(arg string) error{
	// connect PATH: connect to a filesystem unix socket and print its first line.
	"connect": func(path string) error { return dial(path) },
	// bind PATH: bind a unix stream socket at PATH and listen on it.
	"bind": func(path string) error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
			return err
		}
		return unix.Listen(fd, 1)
	},
	// abstract NAME: connect to an abstract unix socket.
	"abstract": func(name string) error { return dial("@" + name) },
	// read PATH: print a file.
	"read": func(path string) error {
		b, err := os.ReadFile(path)
		if err == nil {
			fmt.Printf("%s", b)
		}
		return err
	},
	// write PATH: create or truncate a file and write "planted".
	"write": func(path string) error { return os.WriteFile(path, []byte("planted\n"), 0o644) },
	// mkdir PATH: create a directory.
	"mkdir": func(path string) error { return os.Mkdir(path, 0o755) },
	// rename OLD:NEW: move a path aside.
	"rename": func(arg string) error {
		from, to, _ := strings.Cut(arg, ":")
		return os.Rename(from, to)
	},
	// ls DIR: list a directory, one name a line.
	"ls": func(dir string) error {
		entries, err := os.ReadDir(dir)
		for _, e := range entries {
			fmt.Println(e.Name())
		}
		return err
	},
	// dns ADDR: send a DNS query for example.com over UDP to ADDR and wait
	// a second for any answer.
	"dns": func(addr string) error {
		c, err := net.Dial("udp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		query := []byte{0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1}
		if _, err := c.Write(query); err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(make([]byte, 512))
		if err == nil {
			fmt.Printf("dns: %d bytes of answer\n", n)
		}
		return err
	},
	// env: print the environment, sorted.
	"env": func(string) error {
		env := os.Environ()
		sort.Strings(env)
		fmt.Println(strings.Join(env, "\n"))
		return nil
	},
	// status: print the capability, no_new_privs and seccomp lines of /proc/self/status.
	"status": func(string) error {
		b, err := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "Cap") || strings.HasPrefix(line, "NoNewPrivs") || strings.HasPrefix(line, "Seccomp:") {
				fmt.Println(line)
			}
		}
		return err
	},
	// procs: print every visible process's command line.
	"procs": func(string) error {
		entries, err := os.ReadDir("/proc")
		for _, e := range entries {
			if e.Name()[0] < '0' || e.Name()[0] > '9' {
				continue
			}
			cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			fmt.Printf("%s %s\n", e.Name(), strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " "))
		}
		return err
	},
	// environ PID: print another process's environment.
	"environ": func(pid string) error {
		b, err := os.ReadFile("/proc/" + pid + "/environ")
		if err == nil {
			fmt.Println(strings.ReplaceAll(string(b), "\x00", "\n"))
		}
		return err
	},
	// sysctl-rewrite: write a kernel setting's current value back to it, so
	// that even where the write succeeds nothing changes.
	"sysctl-rewrite": func(path string) error {
		value, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(value)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	},
	// mount: try to mount a tmpfs.
	"mount": func(string) error { return unix.Mount("tmpfs", "/mnt", "tmpfs", 0, "") },
	// tiocsti: push a keystroke into a terminal that is this process's controlling tty.
	"tiocsti": func(string) error {
		return withControllingTTY(func(fd int) error { return unix.IoctlSetPointerInt(fd, unix.TIOCSTI, 'x') })
	},
	// tioclinux: issue a TIOCLINUX request on a terminal.
	"tioclinux": func(string) error {
		return withControllingTTY(func(fd int) error {
			err := unix.IoctlSetPointerInt(fd, unix.TIOCLINUX, 0)
			if errors.Is(err, unix.EPERM) {
				return err
			}
			fmt.Printf("tioclinux: reached the tty driver (%v)\n", err)
			return nil
		})
	},
	// keyctl: read the session keyring's id.
	"keyctl": func(string) error {
		_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
		return err
	},
	// add_key: add a key to the process keyring.
	"add_key": func(string) error {
		_, err := unix.AddKey("user", "claude-sandbox-probe", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
		return err
	},
	// request_key: look a key up (a missing key is "reached", EPERM is refused).
	"request_key": func(string) error {
		_, err := unix.RequestKey("user", "claude-sandbox-probe-missing", "", unix.KEY_SPEC_PROCESS_KEYRING)
		return reached(err)
	},
	// unshare-user: create a user namespace with unshare(2).
	"unshare-user": func(string) error { return reached(unix.Unshare(unix.CLONE_NEWUSER)) },
	// clone-user: create a user namespace with clone(2).
	"clone-user": func(string) error {
		pid, _, errno := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
		if errno != 0 {
			return errno
		}
		if pid == 0 {
			unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
		}
		var ws unix.WaitStatus
		_, err := unix.Wait4(int(pid), &ws, 0, nil)
		return err
	},
	// clone3: call clone3 with no arguments (a filter answers ENOSYS, the kernel EFAULT or EINVAL).
	"clone3": func(string) error {
		_, _, errno := unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
		if errno == unix.ENOSYS {
			return errno
		}
		fmt.Printf("clone3: reached the kernel (%v)\n", errno)
		return nil
	},
	// socket KIND: create a socket of one family (see socketKinds) and close
	// it at once. Nothing is bound, connected or sent.
	"socket": func(kind string) error {
		k, ok := socketKinds[kind]
		if !ok {
			return fmt.Errorf("unknown socket kind %q", kind)
		}
		if k.pair {
			fds, err := unix.Socketpair(k.family, k.typ|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return err
			}
			unix.Close(fds[0])
			unix.Close(fds[1])
		} else {
			fd, err := unix.Socket(k.family, k.typ|unix.SOCK_CLOEXEC, k.proto)
			if err != nil {
				return err
			}
			unix.Close(fd)
		}
		fmt.Printf("socket %s: created\n", kind)
		return nil
	},
	// io_uring CALL: call io_uring_setup, io_uring_enter or io_uring_register with bad arguments.
	// flood MAX: fork idle children until refused or MAX, then wait for SIGTERM.
	"flood": flood,
	// conn-flood SLOW,IDLE[,ADDR...]: flood the launcher's proxies with
	// connections (connFlood), then wait for SIGTERM.
	"conn-flood": connFlood,
	"io_uring": func(call string) error {
		nr := map[string]uintptr{"setup": unix.SYS_IO_URING_SETUP, "enter": unix.SYS_IO_URING_ENTER, "register": unix.SYS_IO_URING_REGISTER}[call]
		_, _, errno := unix.RawSyscall6(nr, ^uintptr(0), 0, 0, 0, 0, 0)
		return reached(errno)
	},
}

// socketKinds are the sockets the socket probe can create.
var socketKinds = map[string]struct {
	family, typ, proto int
	pair               bool
}{
	"inet":              {family: unix.AF_INET, typ: unix.SOCK_STREAM},
	"inet6":             {family: unix.AF_INET6, typ: unix.SOCK_DGRAM},
	"netlink-route":     {family: unix.AF_NETLINK, typ: unix.SOCK_RAW, proto: unix.NETLINK_ROUTE},
	"unix-pair":         {family: unix.AF_UNIX, typ: unix.SOCK_STREAM, pair: true},
	"vsock":             {family: unix.AF_VSOCK, typ: unix.SOCK_STREAM},
	"packet":            {family: unix.AF_PACKET, typ: unix.SOCK_RAW},
	"inet-packet":       {family: unix.AF_INET, typ: unix.SOCK_PACKET},
	"xdp":               {family: unix.AF_XDP, typ: unix.SOCK_RAW},
	"netlink-audit":     {family: unix.AF_NETLINK, typ: unix.SOCK_RAW, proto: unix.NETLINK_AUDIT},
	"netlink-uevent":    {family: unix.AF_NETLINK, typ: unix.SOCK_DGRAM, proto: unix.NETLINK_KOBJECT_UEVENT},
	"netlink-generic":   {family: unix.AF_NETLINK, typ: unix.SOCK_RAW, proto: unix.NETLINK_GENERIC},
	"netlink-netfilter": {family: unix.AF_NETLINK, typ: unix.SOCK_RAW, proto: unix.NETLINK_NETFILTER},
	"netlink-sock-diag": {family: unix.AF_NETLINK, typ: unix.SOCK_RAW, proto: unix.NETLINK_SOCK_DIAG},
	"inet-pair":         {family: unix.AF_INET, typ: unix.SOCK_STREAM, pair: true},
}

// flood forks children that do nothing until it is told to stop, as many as
// the kernel allows or at most max (the argument), and prints how many it got
// and why it stopped. On SIGTERM it kills them and exits 0; they die with it
// in any case. The children are raw clones that never return to Go: a
// process without threads to spare cannot start a Go program.
func flood(arg string) error {
	max, err := strconv.Atoi(arg)
	if err != nil || max < 1 {
		return fmt.Errorf("flood: want a positive count, not %q", arg)
	}
	childName := []byte("flood-child\x00") // so that only the parent answers to its own name
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	var children []int
	why := "reached the count"
	for len(children) < max {
		pid, _, errno := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
		if errno != 0 {
			why = errno.Error()
			break
		}
		if pid == 0 {
			unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_NAME, uintptr(unsafe.Pointer(&childName[0])), 0)
			unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0)
			for {
				unix.RawSyscall(unix.SYS_PAUSE, 0, 0, 0)
			}
		}
		children = append(children, int(pid))
	}
	fmt.Printf("flood: %d tasks, then %s\n", len(children), why)
	<-stop
	for _, pid := range children {
		unix.Kill(pid, unix.SIGKILL)
	}
	for range children {
		var ws unix.WaitStatus
		unix.Wait4(-1, &ws, 0, nil)
	}
	return nil
}

// reached treats any answer but EPERM as the kernel having been reached.
func reached(err error) error {
	if errors.Is(err, unix.EPERM) {
		return err
	}
	fmt.Printf("reached the kernel (%v)\n", err)
	return nil
}

func dial(addr string) error {
	conn, err := net.Dial("unix", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	buf := make([]byte, 256)
	n, _ := conn.Read(buf)
	fmt.Printf("connected: %s", buf[:n])
	return nil
}

// withControllingTTY makes a new pty the controlling terminal of a new
// session, so TIOCSTI would be allowed without the filter.
func withControllingTTY(f func(fd int) error) error {
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	defer unix.Close(master)
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		return fmt.Errorf("setup: unlockpt: %w", err)
	}
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	if err != nil {
		return fmt.Errorf("setup: ptsname: %w", err)
	}
	signal.Ignore(syscall.SIGHUP) // closing the pty hangs up its session
	if _, err := unix.Setsid(); err != nil {
		return fmt.Errorf("setup: setsid: %w", err)
	}
	slave, err := unix.Open(fmt.Sprintf("/dev/pts/%d", n), unix.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("setup: open pts: %w", err)
	}
	defer unix.Close(slave)
	if err := unix.IoctlSetInt(slave, unix.TIOCSCTTY, 0); err != nil {
		return fmt.Errorf("setup: TIOCSCTTY: %w", err)
	}
	return f(slave)
}

// connFlood opens, to each of the addresses given (by default the proxies
// of an allowlist sandbox: the allowlist proxy and the credential proxy),
// SLOW connections that send a
// request's headers in 16 KiB lines, one line to each per round, up to
// 1 MiB each, and keeps them open; then IDLE connections that send nothing,
// to each in turn. A write the proxy cuts off (431, or its close) ends
// that connection's headers. It prints what it opened and why it stopped,
// then waits for SIGTERM.
func connFlood(arg string) error {
	var slow, idle int
	fields := strings.Split(arg, ",")
	if _, err := fmt.Sscanf(arg, "%d,%d", &slow, &idle); err != nil || slow < 0 || idle < 0 {
		return fmt.Errorf("conn-flood: want SLOW,IDLE[,ADDR...], not %q", arg)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	addrs := []string{"127.0.0.1:3128", "127.0.0.1:3129"}
	if len(fields) > 2 {
		addrs = fields[2:]
	}
	var slowConns, idleConns []net.Conn
	for range slow {
		for _, a := range addrs {
			c, err := net.Dial("tcp", a)
			if err != nil {
				return err
			}
			c.Write([]byte("POST /v1/messages HTTP/1.1\r\nHost: api.test\r\n"))
			slowConns = append(slowConns, c)
		}
	}
	line := []byte("X-Pad: " + strings.Repeat("a", 16<<10-9) + "\r\n")
	cut := make([]bool, len(slowConns))
	for range (1 << 20) / len(line) {
		for i, c := range slowConns {
			if cut[i] {
				continue
			}
			c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write(line); err != nil {
				cut[i] = true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	ended := 0
	for _, c := range cut {
		if c {
			ended++
		}
	}
	why := "reached the count"
	for i := range idle {
		// A launcher out of descriptors accepts nothing, and its queue
		// fills: a connection then waits for an accept that never comes.
		c, err := net.DialTimeout("tcp", addrs[i%len(addrs)], 2*time.Second)
		if err != nil {
			why = err.Error()
			break
		}
		idleConns = append(idleConns, c)
	}
	fmt.Printf("conn-flood: %d slow connections (%d cut off), %d idle, then %s\n", len(slowConns), ended, len(idleConns), why)
	<-stop
	return nil
}
