package verify

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/claude-sandbox/claude-sandbox/warden"
	"golang.org/x/sys/unix"
)

// kernelLock: where the kernel has Landlock ABI 3, the warden lets a call
// that lands on the sandbox's own /dev go on in the kernel, and the
// sandbox's Landlock domain refuses it anywhere else, whatever a thread
// swapped in after the warden looked (ADR 0040). The probe makes ".Git"
// through a descriptor that another thread points, over and over, at a
// directory in /dev/shm (where the warden lets the call go on) and at one
// in the workspace (where the warden refuses the name): the kernel must refuse
// (EACCES) every call that the warden let go on and that reached the
// workspace, and no ".Git" may appear there. Without the domain the
// kernel makes it. Without Landlock's ABI 3 the warden carries every call
// out, and the probe shows only that nothing got through.
func kernelLock(f *facts) (string, error) {
	if err := f.launchErr; err != nil {
		return "", err
	}
	ws := f.launch.plan.Workspace
	if errors.Is(unix.Access(ws, unix.W_OK), unix.EACCES) {
		// The kernel's own EACCES for a directory the user may not write
		// would pass for the lock's.
		return "the workspace " + ws + " is not this user's to write: the probe needs one", nil
	}
	// A new directory on each side, so that nothing is there to find but
	// what the probe makes (a case-folding workspace finds ".git" as ".Git").
	shared, err := os.MkdirTemp(ws, ".verify-kernel-lock-")
	if err != nil {
		return "", fmt.Errorf("cannot make a directory in the workspace: %w", err)
	}
	defer os.RemoveAll(shared)
	private, err := os.MkdirTemp("/dev/shm", "verify-kernel-lock-")
	if err != nil {
		return "", fmt.Errorf("cannot make a directory in /dev/shm: %w", err)
	}
	defer os.RemoveAll(private)
	r, err := raceSwappedDir(shared, private, ".Git", 3*time.Second)
	if err != nil {
		return "", err
	}
	if r.madeOutside {
		return "", fmt.Errorf("a .Git was made in %s through a descriptor swapped after the warden looked (removed again): the kernel does not hold the sandbox's files", ws)
	}
	abi, why := warden.Landlock()
	switch {
	case abi < warden.LockABI:
		return fmt.Sprintf("no kernel lock (it needs Landlock ABI %d, and %s): the warden carries out every call, and %d swapped calls got nothing into the workspace", warden.LockABI, why, r.calls), nil
	case r.lockRefused == 0:
		return "", fmt.Errorf("in %d calls through a swapped descriptor, the kernel never refused one the warden let go on (Landlock ABI %d): the sandbox's own /dev is not locked, or the warden lets nothing go on", r.calls, abi)
	}
	return fmt.Sprintf("the kernel refused %d of %d calls the warden let go on in /dev/shm and a thread swapped to the workspace (EACCES, Landlock ABI %d); none made anything there", r.lockRefused, r.calls, abi), nil
}

// A swapRace is what raceSwappedDir saw.
type swapRace struct {
	calls       int
	lockRefused int  // EACCES: the kernel's domain refused the call
	madeOutside bool // the name was made in the shared directory
}

// raceSwappedDir makes name with mkdirat through one descriptor number
// while another thread points it at shared and at private in turn, until
// the kernel's lock refused some calls or the time is up. A name made in
// private is removed for the next call; one made in shared ends the race.
func raceSwappedDir(shared, private, name string, limit time.Duration) (swapRace, error) {
	var r swapRace
	sharedFD, err := unix.Open(shared, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return r, err
	}
	defer unix.Close(sharedFD)
	privateFD, err := unix.Open(private, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return r, err
	}
	defer unix.Close(privateFD)
	swapped, err := unix.FcntlInt(uintptr(privateFD), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return r, err
	}
	defer unix.Close(swapped)
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
	defer func() { stop.Store(true); <-done }()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && r.lockRefused < 100 {
		r.calls++
		err := unix.Mkdirat(swapped, name, 0o755)
		if err == unix.EACCES {
			r.lockRefused++
		}
		if unix.Fstatat(sharedFD, name, new(unix.Stat_t), unix.AT_SYMLINK_NOFOLLOW) == nil {
			unix.Unlinkat(sharedFD, name, unix.AT_REMOVEDIR)
			r.madeOutside = true
			return r, nil
		}
		unix.Unlinkat(privateFD, name, unix.AT_REMOVEDIR)
	}
	return r, nil
}
