package launcher

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
// sandbox always has: no effective capabilities, no_new_privs, and a syscall
// filter that refuses unix sockets. Nothing here reads the environment or a
// settings file, so neither can forge it.
func Inside() bool {
	fi, err := os.Lstat(layout.InsideMarker)
	return err == nil && fi.IsDir() && confined()
}

func confined() bool {
	status, err := procstatus.Read("self")
	if err != nil {
		return false
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fd)
	}
	return confinedBy(status, err)
}

// confinedBy decides from the process's status file and the result of
// creating a unix socket: no effective capabilities, no_new_privs, and the
// socket refused with EPERM (the sandbox's filter, not some other error).
func confinedBy(status procstatus.Status, unixSocketErr error) bool {
	capEff := status["CapEff"]
	noNewPrivs, noCaps := status["NoNewPrivs"] == "1", capEff != "" && strings.Trim(capEff, "0") == ""
	return noNewPrivs && noCaps && errors.Is(unixSocketErr, unix.EPERM)
}
