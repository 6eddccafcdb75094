package testscripts

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The race against the kernel's lock (ADR 0040): a call the warden lets go
// on, because it lands on a file system the sandbox's Landlock domain
// grants, is read again by the kernel, after a thread may have swapped it.
func init() {
	probes["swap-race"] = swapRace
}

// swap-race OP:SHARED:PRIVATE:SECONDS races for SECONDS: one thread points
// a descriptor at SHARED and at a new directory in PRIVATE in turn, while
// the probe makes or writes through it what the warden refuses in SHARED,
// a git directory (SHARED is one): OP mkdir makes ".Git"; open-trunc opens
// "index" with O_WRONLY|O_TRUNC, truncate truncates it by a path through
// /proc/self/fd; open-fixed opens /dev/null for appending and writes a
// byte, its path in memory swapped with the index's instead of the
// descriptor. It fails if anything reached SHARED (".Git" made, the
// index changed), and reports how many calls the kernel refused (EACCES).
func swapRace(arg string) error {
	parts := strings.Split(arg, ":")
	if len(parts) != 4 {
		return fmt.Errorf("usage: swap-race OP:SHARED:PRIVATE:SECONDS")
	}
	op, shared := parts[0], parts[1]
	seconds, err := strconv.Atoi(parts[3])
	if err != nil {
		return err
	}
	private, err := os.MkdirTemp(parts[2], "swap-race-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(private)
	index, err := os.ReadFile(filepath.Join(shared, "index"))
	if err != nil {
		return err
	}
	sharedFD, err := unix.Open(shared, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	privateFD, err := unix.Open(private, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	swapped, err := unix.FcntlInt(uintptr(privateFD), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return err
	}
	// open-fixed opens /dev/null, a name the warden lets go on at a look,
	// from a page of memory another thread maps over, again and again, with
	// one that holds the shared index's path: the path itself is swapped.
	page := os.Getpagesize()
	fixedPath, err := swappedPage(page, "/dev/null", filepath.Join(shared, "index"))
	if err != nil {
		return err
	}
	call := map[string]func() error{
		"open-fixed": func() error {
			fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, atFDCWD, fixedPath.addr, unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC, 0, 0, 0)
			if errno != 0 {
				return errno
			}
			defer unix.Close(int(fd))
			_, err := unix.Write(int(fd), []byte("x"))
			return err
		},
		"mkdir": func() error { return unix.Mkdirat(swapped, ".Git", 0o755) },
		"open-trunc": func() error {
			fd, err := unix.Openat(swapped, "index", unix.O_WRONLY|unix.O_TRUNC|unix.O_CLOEXEC, 0)
			if err == nil {
				unix.Close(fd)
			}
			return err
		},
		"truncate": func() error { return unix.Truncate(fmt.Sprintf("/proc/self/fd/%d/index", swapped), 0) },
	}[op]
	if call == nil {
		return fmt.Errorf("no op %q", op)
	}
	// reached says whether the call reached SHARED; it makes PRIVATE ready
	// for the next one.
	reached := func() bool {
		if op == "mkdir" {
			unix.Unlinkat(privateFD, ".Git", unix.AT_REMOVEDIR)
			return unix.Fstatat(sharedFD, ".Git", new(unix.Stat_t), unix.AT_SYMLINK_NOFOLLOW) == nil
		}
		os.WriteFile(filepath.Join(private, "index"), index, 0o644)
		now, err := os.ReadFile(filepath.Join(shared, "index"))
		return err != nil || !bytes.Equal(now, index)
	}
	reached()
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		for !stop.Load() {
			if op == "open-fixed" {
				fixedPath.swap()
				continue
			}
			unix.Dup3(sharedFD, swapped, unix.O_CLOEXEC)
			unix.Dup3(privateFD, swapped, unix.O_CLOEXEC)
		}
	}()
	calls, refused, errnos := 0, 0, map[string]int{}
	for deadline := time.Now().Add(time.Duration(seconds) * time.Second); time.Now().Before(deadline); {
		calls++
		err := call()
		if err == unix.EACCES {
			refused++
		}
		if err != nil {
			errnos[err.Error()]++
		}
		if reached() {
			stop.Store(true)
			<-done
			return fmt.Errorf("after %d calls, %s reached %s (%v)", calls, op, shared, errnos)
		}
	}
	stop.Store(true)
	<-done
	fmt.Printf("swap-race %s: %d calls, %d refused by the kernel, nothing reached the shared directory\n", op, calls, refused)
	return nil
}

// atFDCWD is AT_FDCWD as a system call's argument.
var atFDCWD = func() uintptr { fd := unix.AT_FDCWD; return uintptr(fd) }()

// A pageSwap is a page of memory that holds one of two paths, each a file
// of its own mapped over the page in turn (swap): a reader sees one path or
// the other whole, never a mix.
type pageSwap struct {
	addr  uintptr
	size  int
	files [2]int
	now   int
}

func swappedPage(size int, a, b string) (*pageSwap, error) {
	s := &pageSwap{size: size}
	for i, p := range []string{a, b} {
		fd, err := unix.MemfdCreate("swap-race", unix.MFD_CLOEXEC)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, size)
		copy(buf, p)
		if _, err := unix.Pwrite(fd, buf, 0); err != nil {
			return nil, err
		}
		s.files[i] = fd
	}
	addr, _, errno := unix.Syscall6(unix.SYS_MMAP, 0, uintptr(size), unix.PROT_READ, unix.MAP_SHARED, uintptr(s.files[0]), 0)
	if errno != 0 {
		return nil, errno
	}
	s.addr = addr
	return s, nil
}

func (s *pageSwap) swap() {
	s.now ^= 1
	unix.Syscall6(unix.SYS_MMAP, s.addr, uintptr(s.size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_FIXED, uintptr(s.files[s.now]), 0)
}
