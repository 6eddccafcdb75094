package host

import (
	"errors"
	"os"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/procstatus"
	"golang.org/x/sys/unix"
)

// Inside reports whether this process runs inside a claude-sandbox. The
// marker directory alone would do against the model, which can never write
// the real /run; but a process outside could fake it in a namespace of its
// own (`unshare -rm`), so Inside also demands what that fake lacks and the
// sandbox always has: no effective capabilities, no_new_privs, and the
// sandbox's syscall filter, which answers socket(AF_VSOCK) with
// EAFNOSUPPORT before the kernel could answer a bad flag bit with EINVAL.
// Nothing here reads the environment or a settings file, so neither can
// forge it.
func Inside() bool {
	fi, err := os.Lstat(layout.InsideMarker)
	return err == nil && fi.IsDir() && confined()
}

func confined() bool {
	status, err := procstatus.Read("self")
	if err != nil {
		return false
	}
	// The flag bit makes the kernel refuse the call (EINVAL) before it
	// looks at the family: without the filter nothing is created.
	fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|filterProbeFlag, 0)
	if err == nil {
		unix.Close(fd)
	}
	return confinedBy(status, err)
}

// filterProbeFlag is a bit of socket()'s type that is neither a type nor
// SOCK_CLOEXEC or SOCK_NONBLOCK.
const filterProbeFlag = 1 << 30

// confinedBy decides from the process's status file and the result of
// the filter's probe: no effective capabilities, no_new_privs, and
// socket(AF_VSOCK) refused with EAFNOSUPPORT (the sandbox's filter; the
// kernel says EINVAL, a container runtime's filter EPERM).
func confinedBy(status procstatus.Status, probeErr error) bool {
	capEff := status["CapEff"]
	noNewPrivs, noCaps := status["NoNewPrivs"] == "1", capEff != "" && strings.Trim(capEff, "0") == ""
	return noNewPrivs && noCaps && errors.Is(probeErr, unix.EAFNOSUPPORT)
}
