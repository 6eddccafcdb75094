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
// /proc/self/fd. It fails if anything reached SHARED (".Git" made, the
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
	call := map[string]func() error{
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
