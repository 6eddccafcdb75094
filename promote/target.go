package promote

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/atomicfile"
	"golang.org/x/sys/unix"
)

// maxFileSize bounds what promote reads from the target: the files it owns
// are a few kilobytes, and the target is untrusted.
const maxFileSize = 1 << 20

// target is the repository promote writes into. It is untrusted (a sandboxed
// session may have written to it), so every path below it is reached from
// the root descriptor one component at a time with O_NOFOLLOW: no symlink in
// the target can lead a read or a write outside it.
type target struct {
	root string // as the user named it, for messages
	fd   int
}

func openTarget(root string) (*target, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	return &target{root: root, fd: fd}, nil
}

func (t *target) close() { unix.Close(t.fd) }

// refusal is the one-line error for an entry promote will not touch.
func refusal(rel, why string) error {
	return fmt.Errorf("refusing %s: %s (promote never follows links or touches special files in the target)", rel, why)
}

// openDir opens the directory rel below the target, creating missing
// directories when create is set; without it a missing one is fs.ErrNotExist.
func (t *target) openDir(rel string, create bool) (int, error) {
	fd, err := unix.Openat(t.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if rel == "." {
		return fd, nil
	}
	walked := ""
	for _, name := range strings.Split(rel, "/") {
		walked = path.Join(walked, name)
		next, err := openChildDir(fd, name, walked, create)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

func openChildDir(dir int, name, rel string, create bool) (int, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT) && create:
		if err := unix.Mkdirat(dir, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, &fs.PathError{Op: "mkdir", Path: rel, Err: err}
		}
	case errors.Is(err, unix.ENOENT):
		return -1, fs.ErrNotExist
	case err != nil:
		return -1, &fs.PathError{Op: "stat", Path: rel, Err: err}
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return -1, refusal(rel, "it is a symlink")
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return -1, refusal(rel, "it is not a directory")
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, refusal(rel, "it cannot be opened as a directory without following a link")
	}
	return fd, nil
}

// read returns the regular file rel below the target and its permissions;
// a missing file (or directory on the way) is fs.ErrNotExist.
func (t *target) read(rel string) ([]byte, os.FileMode, error) {
	dir, err := t.openDir(path.Dir(rel), false)
	if err != nil {
		return nil, 0, err
	}
	defer unix.Close(dir)
	name := path.Base(rel)
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return nil, 0, fs.ErrNotExist
	} else if err != nil {
		return nil, 0, &fs.PathError{Op: "stat", Path: rel, Err: err}
	}
	if err := regular(rel, st); err != nil {
		return nil, 0, err
	}
	// O_NONBLOCK: if a FIFO took the file's place since the stat, the open
	// must not hang; the fstat below then refuses it.
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, refusal(rel, "it cannot be opened without following a link")
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, &fs.PathError{Op: "stat", Path: rel, Err: err}
	}
	if err := regular(rel, st); err != nil {
		return nil, 0, err
	}
	data := make([]byte, st.Size)
	if _, err := f.ReadAt(data, 0); err != nil && st.Size > 0 {
		return nil, 0, &fs.PathError{Op: "read", Path: rel, Err: err}
	}
	return data, os.FileMode(st.Mode & 0o777), nil
}

func regular(rel string, st unix.Stat_t) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFLNK:
		return refusal(rel, "it is a symlink")
	default:
		return refusal(rel, "it is not a regular file")
	}
	if st.Size > maxFileSize {
		return refusal(rel, fmt.Sprintf("it is larger than %d bytes", maxFileSize))
	}
	return nil
}

// write replaces rel below the target with data, atomically: a temporary
// file in the same directory, renamed over the old entry. The rename
// replaces the entry itself, so a hard link to a file elsewhere is never
// written through.
func (t *target) write(rel string, data []byte, mode os.FileMode) error {
	dir, err := t.openDir(path.Dir(rel), true)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := atomicfile.WriteAt(dir, path.Base(rel), data, mode); err != nil {
		return &fs.PathError{Op: "write", Path: rel, Err: err}
	}
	return nil
}
