package testscripts

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The race of a bind against the names it resolves (ADR 0031): outside, a
// host's sockets; inside, threads that move the working directory and swap
// a link between the host's directory and the sandbox's while others bind
// by relative names, through the link and through /proc, and connect to the
// host's sockets.
func init() {
	probes["host-sockets"] = hostSockets
	probes["race-bind"] = raceBind
}

// host-sockets DIR:N listens at DIR/n0 ... DIR/n(N-1), answering HOST to
// every connection, until killed: the host's services.
func hostSockets(arg string) error {
	dir, count, _ := strings.Cut(arg, ":")
	n, err := strconv.Atoi(count)
	if err != nil {
		return fmt.Errorf("usage: host-sockets DIR:N")
	}
	for i := range n {
		l, err := net.Listen("unix", filepath.Join(dir, fmt.Sprintf("n%d", i)))
		if err != nil {
			return err
		}
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("HOST\n"))
				c.Close()
			}
		}()
	}
	fmt.Println("listening")
	select {}
}

// race-bind HOST:OWN:N:SECONDS races for SECONDS, HOST holding the host's
// sockets n0 ... n(N-1) and OWN the sandbox's directory. It fails if a
// connect reached a host socket, or if a bind that succeeded left its
// socket anywhere but OWN, where the check looked (a host socket's name is
// never free, so every bind that lands is in OWN).
func raceBind(arg string) error {
	parts := strings.Split(arg, ":")
	if len(parts) != 4 {
		return fmt.Errorf("usage: race-bind HOST:OWN:N:SECONDS")
	}
	host, own := parts[0], parts[1]
	n, _ := strconv.Atoi(parts[2])
	seconds, _ := strconv.Atoi(parts[3])
	link := filepath.Join(own, "L")
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	var binds, landed, connects, escapes, misplaced atomic.Int64
	var report sync.Mutex
	say := func(format string, args ...any) {
		report.Lock()
		fmt.Printf(format+"\n", args...)
		report.Unlock()
	}
	// Every relative name starts in one of the two.
	if err := unix.Chdir(own); err != nil {
		return err
	}
	var wg sync.WaitGroup
	run := func(f func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				f(i)
			}
		}()
	}
	// The working directory and the link flip between the two.
	run(func(i int) {
		_ = unix.Chdir([]string{host, own}[i%2])
	})
	run(func(i int) {
		tmp := fmt.Sprintf("%s/.L%d", own, i)
		if unix.Symlink([]string{host, own}[i%2], tmp) == nil {
			if unix.Rename(tmp, link) != nil {
				unix.Unlink(tmp)
			}
		}
	})
	// Binds by every name whose meaning moves, each checked where it landed.
	for b := range 3 {
		run(func(i int) {
			k := (i*3 + b) % n
			name := []string{fmt.Sprintf("n%d", k), fmt.Sprintf("L/n%d", k), fmt.Sprintf("/proc/self/cwd/n%d", k)}[i%3]
			binds.Add(1)
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return
			}
			defer unix.Close(fd)
			if unix.Bind(fd, &unix.SockaddrUnix{Name: name}) != nil {
				return
			}
			landed.Add(1)
			mine := filepath.Join(own, fmt.Sprintf("n%d", k))
			defer unix.Unlink(mine)
			// A backlog with room for the connects below, which reach
			// this socket too when the link leads here.
			if err := unix.Listen(fd, 64); err != nil {
				say("listen after bind %s: %v", name, err)
				misplaced.Add(1)
			} else if err := reachesListener(fd, mine); err != nil {
				misplaced.Add(1)
				say("bind %s succeeded, but its socket is not %s: %v", name, mine, err)
			}
		})
	}
	// Connects to the host's sockets, by absolute name and through the link.
	run(func(i int) {
		k := i % n
		for _, p := range []string{filepath.Join(host, fmt.Sprintf("n%d", k)), fmt.Sprintf("%s/n%d", link, k)} {
			connects.Add(1)
			if answer, err := readFirstLine(p); err == nil && answer == "HOST" {
				escapes.Add(1)
				say("connect %s reached a host socket", p)
			}
		}
	})
	wg.Wait()
	fmt.Printf("race-bind: %d binds (%d landed), %d connects, %d misplaced, %d escapes\n", binds.Load(), landed.Load(), connects.Load(), misplaced.Load(), escapes.Load())
	if escapes.Load() > 0 || misplaced.Load() > 0 {
		return fmt.Errorf("a bind or connect acted elsewhere than checked")
	}
	if landed.Load() == 0 {
		return fmt.Errorf("no bind landed: the race tested nothing")
	}
	return nil
}

// reachesListener says why a connect to path is not accepted by the
// listening socket fd, or nil.
func reachesListener(fd int, path string) error {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 5})
	for {
		a, _, err := unix.Accept4(fd, unix.SOCK_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("accept: %w", err)
		}
		unix.Close(a)
		return nil
	}
}

func readFirstLine(path string) (string, error) {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 16)
	m, err := c.Read(buf)
	return strings.TrimSpace(string(buf[:m])), err
}
