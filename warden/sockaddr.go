package warden

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// A unix socket address, parsed.
type unixAddr struct {
	path     string // a name in the file system
	abstract bool
}

// parseUnix reads a struct sockaddr_un. ok is false for an address the
// kernel itself refuses or reads no name from (too short, another family,
// an unnamed bind): that one is passed on as it is.
func parseUnix(addr []byte) (a unixAddr, ok bool) {
	if len(addr) <= 2 || binary.NativeEndian.Uint16(addr) != unix.AF_UNIX {
		return unixAddr{}, false
	}
	p := addr[2:]
	if p[0] == 0 {
		return unixAddr{abstract: true}, true
	}
	for i, c := range p {
		if c == 0 {
			p = p[:i]
			break
		}
	}
	return unixAddr{path: string(p)}, true
}

// sockaddrUnix is a struct sockaddr_un for path.
func sockaddrUnix(path string) []byte {
	b := binary.NativeEndian.AppendUint16(nil, unix.AF_UNIX)
	return append(append(b, path...), 0)
}

// procPath is the name by which the warden reaches the file it holds as fd,
// whatever is at its old name now.
func procPath(fd int) string { return fmt.Sprintf("/proc/self/fd/%d", fd) }
