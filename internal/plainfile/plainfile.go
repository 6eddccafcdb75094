// Package plainfile reads a file the launcher takes from a place a sandbox
// could have written: the login, the workspace's settings and git
// configuration, the git store's files. Such a file may be anything a
// session left there, and the launcher reads it before any sandbox exists,
// so a read that blocks or takes all memory stops every later launch.
//
// Read opens without following a link (unless the caller's files may be
// links by the user's choice) and without blocking (O_NONBLOCK: a FIFO's
// open waits for a writer otherwise), looks at what it opened (fstat):
// a regular file, of the expected owner, no larger than the bound, and
// then reads at most that bound. Anything else is refused with one line
// that names the file and what it is.
package plainfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Limits are what a caller accepts.
type Limits struct {
	Max int64 // the largest size read, in bytes
	// Owner is the user the file must belong to; AnyOwner accepts any.
	Owner int
	// DirOwner accepts a file of the user who owns the directory holding
	// it too: a home's ~/.claude bound from the host holds the host user's
	// files, whoever runs the launcher. A session cannot give a file or a
	// directory away (it has no capabilities), so the directory's owner
	// is who the launch trusts with it already.
	DirOwner bool
	// FollowLinks opens the file a last link names, for files a user may
	// keep as links (a dotfile manager's ~/.gitconfig): what is opened is
	// checked all the same.
	FollowLinks bool
}

// AnyOwner accepts a file of any user's.
const AnyOwner = -1

// Error is a refusal: the file is not what the caller reads. Kind says what
// it is ("a FIFO", "a directory", "a symbolic link", ...).
type Error struct {
	Path string
	Why  string
	Kind uint32 // the file's type bits (unix.S_IFMT), 0 when unknown
}

func (e *Error) Error() string { return e.Path + " " + e.Why }

// IsDir reports whether err refuses a directory.
func IsDir(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == unix.S_IFDIR
}

// IsLink reports whether err refuses a symbolic link.
func IsLink(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == unix.S_IFLNK
}

// Read returns the content of the regular file at path within l. A missing
// file is an error that satisfies errors.Is(err, fs.ErrNotExist).
func Read(path string, l Limits) ([]byte, error) {
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	if !l.FollowLinks {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(path, flags, 0)
	switch {
	case err == unix.ELOOP && !l.FollowLinks:
		return nil, &Error{Path: path, Why: "is a symbolic link; the launcher reads it only as a regular file", Kind: unix.S_IFLNK}
	case err == unix.ENXIO:
		// A socket, or a device without a driver, cannot be opened.
		return nil, &Error{Path: path, Why: "is not a regular file (a socket or a device); the launcher reads it only as one: remove it"}
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	return ReadOpen(f, l)
}

// ReadOpen is Read for a file the caller opened itself (for writing too,
// say), without following a link and without blocking: what was opened is
// checked and read as Read does, and f stays open. f.Name() is its path.
func ReadOpen(f *os.File, l Limits) ([]byte, error) {
	path := f.Name()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if err := check(path, &st, l, dirOwner(path, l)); err != nil {
		return nil, err
	}
	// The file may grow after fstat: never more than Max is read.
	data, err := io.ReadAll(io.LimitReader(f, l.Max+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(data)) > l.Max {
		return nil, tooLarge(path, l.Max)
	}
	return data, nil
}

// dirOwner is the owner of the directory holding path when l accepts it,
// else Owner.
func dirOwner(path string, l Limits) int {
	var st unix.Stat_t
	if !l.DirOwner || unix.Stat(filepath.Dir(path), &st) != nil {
		return l.Owner
	}
	return int(st.Uid)
}

// check refuses what fstat shows is not a regular file of the owner (or of
// dir's owner) within the bound.
func check(path string, st *unix.Stat_t, l Limits, dir int) error {
	if kind := st.Mode & unix.S_IFMT; kind != unix.S_IFREG {
		return &Error{Path: path, Why: "is " + kindName(kind) + ", not a regular file; the launcher reads it only as one: remove it", Kind: kind}
	}
	if uid := int(st.Uid); l.Owner != AnyOwner && uid != l.Owner && uid != dir {
		whose := fmt.Sprintf("this user (uid %d)", l.Owner)
		if dir != l.Owner {
			whose += fmt.Sprintf(" or its directory's owner (uid %d)", dir)
		}
		return &Error{Path: path, Why: fmt.Sprintf("belongs to uid %d, not to %s; the launcher reads only the user's own: remove it", uid, whose), Kind: unix.S_IFREG}
	}
	if st.Size > l.Max {
		return tooLarge(path, l.Max)
	}
	return nil
}

func tooLarge(path string, max int64) error {
	return &Error{Path: path, Why: fmt.Sprintf("is larger than the %d bytes the launcher reads of it", max), Kind: unix.S_IFREG}
}

func kindName(kind uint32) string {
	switch kind {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFLNK:
		return "a symbolic link"
	}
	return "of an unknown kind"
}
