package testscripts

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The stress of the warden (ADR 0029): processes and threads inside making,
// opening, renaming, linking and binding names as fast as they can, each
// checking that what it got is what it asked for.
func init() {
	probes["stress-names"] = stressNames
	probes["stress-names-worker"] = stressNamesWorker
}

// Shape of a stress run: stressProcs processes of stressThreads threads.
const (
	stressProcs   = 3
	stressThreads = 4
)

// stressNames DIR:CALLS:SECONDS runs stressProcs worker processes in DIR
// until they have made CALLS calls the warden carries out between them, or
// SECONDS have passed; it fails if any descriptor, name or byte was not
// what was asked for, or if fewer than CALLS calls were made.
func stressNames(arg string) error {
	parts := strings.Split(arg, ":")
	if len(parts) != 3 {
		return fmt.Errorf("usage: stress-names DIR:CALLS:SECONDS")
	}
	calls, err1 := strconv.Atoi(parts[1])
	seconds, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("usage: stress-names DIR:CALLS:SECONDS")
	}
	type result struct {
		out []byte
		err error
	}
	// The test binary again, by the name that makes it the probe.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	results := make([]result, stressProcs)
	var wg sync.WaitGroup
	start := time.Now()
	for p := range stressProcs {
		dir := filepath.Join(parts[0], fmt.Sprintf("p%d", p))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		share := (calls + stressProcs - 1) / stressProcs
		c := exec.Command(self, "stress-names-worker", fmt.Sprintf("%s:%d:%d", dir, share, seconds))
		c.Args[0] = "probe"
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := c.CombinedOutput()
			results[p] = result{out, err}
		}()
	}
	wg.Wait()
	var total, wrong int
	var failures []string
	for p, r := range results {
		var n, w int
		line := lastLine(r.out)
		if _, err := fmt.Sscanf(line, "worker: %d calls, %d wrong", &n, &w); err != nil || r.err != nil {
			failures = append(failures, fmt.Sprintf("worker %d: %v\n%s", p, r.err, r.out))
		}
		total, wrong = total+n, wrong+w
	}
	elapsed := time.Since(start).Round(time.Millisecond)
	fmt.Printf("stress: %d calls in %d processes of %d threads, %v, %d wrong\n", total, stressProcs, stressThreads, elapsed, wrong)
	if len(failures) > 0 {
		return fmt.Errorf("%s", strings.Join(failures, "\n"))
	}
	if total < calls {
		return fmt.Errorf("only %d calls of %d in %d s", total, calls, seconds)
	}
	return nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// stressNamesWorker DIR:CALLS:SECONDS is one process of stressNames: its
// threads each repeat a round of calls in a directory of their own, while
// the process signals itself without pause (a handled signal and the Go
// runtime's own).
func stressNamesWorker(arg string) error {
	parts := strings.Split(arg, ":")
	calls, _ := strconv.Atoi(parts[1])
	seconds, _ := strconv.Atoi(parts[2])
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	var made, wrong atomic.Int64
	var report sync.Mutex
	bad := func(format string, args ...any) {
		wrong.Add(1)
		report.Lock()
		defer report.Unlock()
		if wrong.Load() <= 20 {
			fmt.Printf(format+"\n", args...)
		}
	}
	usr1 := make(chan os.Signal, 64)
	signal.Notify(usr1, unix.SIGUSR1)
	stop := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-usr1:
			case <-time.After(100 * time.Microsecond):
				sig := unix.SIGURG
				if i%4 == 0 {
					sig = unix.SIGUSR1
				}
				_ = unix.Kill(os.Getpid(), sig)
			}
		}
	}()
	var wg sync.WaitGroup
	for th := range stressThreads {
		dir := filepath.Join(parts[0], fmt.Sprintf("t%d", th))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; made.Load() < int64(calls) && time.Now().Before(deadline); i++ {
				made.Add(int64(stressRound(dir, i, bad)))
			}
		}()
	}
	wg.Wait()
	close(stop)
	fmt.Printf("worker: %d calls, %d wrong\n", made.Load(), wrong.Load())
	if wrong.Load() > 0 {
		return fmt.Errorf("%d wrong", wrong.Load())
	}
	return nil
}

// stressRound makes one round of names in dir, checking each against what
// the kernel says the name is, and returns how many calls reached the
// warden. Every error is a failure: nothing here should fail.
func stressRound(dir string, i int, bad func(string, ...any)) int {
	calls := 0
	f, r, d := fmt.Sprintf("%s/f%d", dir, i), fmt.Sprintf("%s/r%d", dir, i), fmt.Sprintf("%s/d%d", dir, i)
	s, h := fmt.Sprintf("%s/s%d", dir, i), fmt.Sprintf("%s/h%d", dir, i)
	defer func() {
		for _, p := range []string{f, r, s, h} {
			_ = unix.Unlink(p)
		}
		_ = unix.Rmdir(d)
	}()
	payload := []byte(f + "\n")

	// A new file, its descriptor, and the bytes written through it.
	calls++
	fd, err := unix.Open(f, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	if err != nil {
		bad("create %s: %v", f, err)
		return calls
	}
	ino, ok := sameFile(fd, f, bad)
	if !ok {
		return calls // not this round's to write to or close
	}
	writeAll(fd, payload, f, bad)
	unix.Close(fd)

	// An existing file opened for appending.
	calls++
	fd, err = unix.Open(f, unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC, 0)
	if err != nil {
		bad("append %s: %v", f, err)
		return calls
	}
	if _, ok := sameFile(fd, f, bad); !ok {
		return calls
	}
	writeAll(fd, []byte("more\n"), f, bad)
	unix.Close(fd)

	// A rename, a directory, a symbolic link and a hard link.
	calls += 4
	if err := unix.Rename(f, r); err != nil {
		bad("rename %s: %v", f, err)
		return calls
	}
	if got := inode(r); got != ino {
		bad("rename %s: %s is inode %d, not %d", f, r, got, ino)
	}
	if err := unix.Mkdir(d, 0o755); err != nil {
		bad("mkdir %s: %v", d, err)
	} else if !isType(d, unix.S_IFDIR) {
		bad("mkdir %s made no directory", d)
	}
	if err := unix.Symlink(filepath.Base(r), s); err != nil {
		bad("symlink %s: %v", s, err)
	} else if target, _ := os.Readlink(s); target != filepath.Base(r) {
		bad("symlink %s points at %q", s, target)
	}
	if err := unix.Link(r, h); err != nil {
		bad("link %s: %v", h, err)
	} else if got := inode(h); got != ino {
		bad("link %s is inode %d, not %d", h, got, ino)
	}
	if data, err := os.ReadFile(r); err != nil || !bytes.Equal(data, append(payload, "more\n"...)) {
		bad("%s holds %q (%v), not what was written", r, data, err)
	}

	// /dev/null for writing, the open programs make most.
	calls++
	fd, err = unix.Open("/dev/null", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		bad("open /dev/null: %v", err)
		return calls
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != unix.Mkdev(1, 3) {
		bad("open /dev/null gave descriptor %d, another file", fd)
		return calls
	}
	unix.Close(fd)

	// Every eighth round, a unix socket bound to a name, and a datagram
	// sent to it by that name: what was bound is what the name reaches.
	if i%8 == 0 {
		calls += 2
		stressSocket(fmt.Sprintf("%s/k%d", dir, i), i, bad)
	}
	return calls
}

func stressSocket(path string, i int, bad func(string, ...any)) {
	defer unix.Unlink(path)
	srv, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		bad("socket: %v", err)
		return
	}
	defer unix.Close(srv)
	if err := unix.Bind(srv, &unix.SockaddrUnix{Name: path}); err != nil {
		bad("bind %s: %v", path, err)
		return
	}
	if !isType(path, unix.S_IFSOCK) {
		bad("bind %s made no socket there", path)
		return
	}
	cli, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		bad("socket: %v", err)
		return
	}
	defer unix.Close(cli)
	msg := []byte("datagram " + strconv.Itoa(i))
	if err := unix.Sendto(cli, msg, 0, &unix.SockaddrUnix{Name: path}); err != nil {
		bad("sendto %s: %v", path, err)
		return
	}
	buf := make([]byte, 64)
	_ = unix.SetsockoptTimeval(srv, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 5})
	for {
		n, _, err := unix.Recvfrom(srv, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || !bytes.Equal(buf[:n], msg) {
			bad("the socket bound at %s got %q (%v), not %q", path, buf[:max(n, 0)], err, msg)
		}
		return
	}
}

// sameFile checks that fd is the file path names now, and returns its
// inode.
func sameFile(fd int, path string, bad func(string, ...any)) (uint64, bool) {
	var got, want unix.Stat_t
	if err := unix.Fstat(fd, &got); err != nil {
		bad("open %s gave descriptor %d: fstat: %v", path, fd, err)
		return 0, false
	}
	if err := unix.Lstat(path, &want); err != nil {
		bad("open %s: lstat: %v", path, err)
		return 0, false
	}
	if got.Dev != want.Dev || got.Ino != want.Ino {
		what, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		bad("open %s gave descriptor %d, which is %s", path, fd, what)
		return 0, false
	}
	return got.Ino, true
}

func writeAll(fd int, data []byte, path string, bad func(string, ...any)) {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			bad("write %s: %v", path, err)
			return
		}
		data = data[n:]
	}
}

func inode(path string) uint64 {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return 0
	}
	return st.Ino
}

func isType(path string, typ uint32) bool {
	var st unix.Stat_t
	return unix.Lstat(path, &st) == nil && st.Mode&unix.S_IFMT == typ
}
