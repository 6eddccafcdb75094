package warden

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Sibling sockets (ADR 0026). Claude Code's background service listens in
// one sandbox and its clients connect from others: every sandbox of the same
// user and workspace sees one host directory (Shared) at the path Claude
// Code uses. A bind that makes a socket file below it is recorded by its
// identity in Registry, a host directory no sandbox sees; a connect or send
// whose socket is not the sandbox's own goes ahead if the registry holds it.
// A socket made there by anything but a sibling's warden (a host process,
// a hard link to a host socket) has an identity no warden recorded.

// Siblings are the directories the sandboxes of one user and workspace
// share for their sockets.
type Siblings struct {
	Shared   string // bound inside every sibling sandbox
	Registry string // seen by no sandbox: the launcher checks it is under a mask
}

type siblingSockets struct {
	shared   fileID
	registry int // O_PATH directory
}

func openSiblings(s *Siblings) (*siblingSockets, error) {
	var st unix.Stat_t
	if err := unix.Stat(s.Shared, &st); err != nil {
		return nil, fmt.Errorf("the background service's socket directory: %w", err)
	}
	reg, err := unix.Open(s.Registry, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("the background service's socket registry: %w", err)
	}
	return &siblingSockets{shared: fileID{uint64(st.Dev), st.Ino}, registry: reg}, nil
}

// entry is the registry's name for a socket file's identity.
func (id sockID) entry() string {
	return fmt.Sprintf("%x-%x-%x.%x", id.dev, id.ino, id.born.Sec, id.born.Nsec)
}

// record enters id, a socket file just bound in dir, in the registry when
// dir is the shared directory or below it.
func (s *siblingSockets) record(dir int, id sockID) {
	if s == nil || !s.holds(dir) {
		return
	}
	fd, err := unix.Openat(s.registry, id.entry(), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err == nil {
		unix.Close(fd)
	}
}

// has says whether a sibling's warden recorded id.
func (s *siblingSockets) has(id sockID) bool {
	if s == nil {
		return false
	}
	var st unix.Stat_t
	return unix.Fstatat(s.registry, id.entry(), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
}

// maxDepth bounds the walk up from a bind's directory: Claude Code's
// sockets are at most three levels below the shared directory.
const maxDepth = 8

// holds says whether dir (a directory the walk reached inside) is the
// shared directory or below it, going up by "..", which stays in the
// sandbox's mounts.
func (s *siblingSockets) holds(dir int) bool {
	fd, err := unix.Openat(dir, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer func() { unix.Close(fd) }()
	for range maxDepth {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			return false
		}
		if (fileID{uint64(st.Dev), st.Ino}) == s.shared {
			return true
		}
		up, err := unix.Openat(fd, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		unix.Close(fd)
		fd = up
	}
	return false
}

// Registered says whether the socket file at path (outside) is in the
// registry at registry: the launcher waits for the service's control
// socket to be there before a client's sandbox starts.
func Registered(registry, path string) bool {
	reg, err := unix.Open(registry, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(reg)
	id, isSock, err := statSock(unix.AT_FDCWD, path, 0)
	return err == nil && isSock && (&siblingSockets{registry: reg}).has(id)
}
