package gitstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// A tree is a directory opened once, below which every path a session
// could have laid is resolved by the kernel one component at a time,
// beneath it and never through a link (openat2 RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS): the store's commands run outside, often as root,
// on what sessions wrote, and a link or a ".." there must lead them
// nowhere outside the tree. Path is for messages only.
type tree struct {
	fd   int
	Path string
}

// beneath is how every path below a tree is resolved: a link, a magic
// link, a mount crossed or a step above the tree fails the call.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// openTree opens the directory at path, which must not be a link itself.
// The path is the product's or the user's, not a session's.
func openTree(path string) (*tree, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return nil, fmt.Errorf("%s is not a directory (a link is not followed: name the directory it leads to)", path)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &tree{fd, path}, nil
}

func (t *tree) Close() { unix.Close(t.fd) }

func (t *tree) where(rel string) string { return filepath.Join(t.Path, rel) }

// open opens rel beneath t.
func (t *tree) open(rel string, flags int, mode uint32) (int, error) {
	if rel == "" {
		rel = "."
	}
	fd, err := unix.Openat2(t.fd, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW), Mode: uint64(mode), Resolve: beneath})
	if errors.Is(err, unix.ENOTDIR) && flags&unix.O_DIRECTORY != 0 && t.isLink(rel) {
		err = unix.ELOOP // O_DIRECTORY meets the link before O_NOFOLLOW
	}
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: t.where(rel), Err: leaves(err)}
	}
	return fd, nil
}

// isLink reports whether rel, reached beneath t, is a link itself.
func (t *tree) isLink(rel string) bool {
	st, err := t.lstat(rel)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// errNotFollowed is what openat2 says of a path that would pass a link or
// leave the tree.
var errNotFollowed = errors.New("a link, or a way out of the store: not followed")

func leaves(err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return errNotFollowed
	}
	return err
}

// sub opens the directory rel beneath t as a tree of its own.
func (t *tree) sub(rel string) (*tree, error) {
	fd, err := t.open(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return &tree{fd, t.where(rel)}, nil
}

// lstat is rel's own status: the link, when rel is one.
func (t *tree) lstat(rel string) (unix.Stat_t, error) {
	var st unix.Stat_t
	dir, base := filepath.Split(rel)
	fd, err := t.open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return st, err
	}
	defer unix.Close(fd)
	if err := unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return st, &os.PathError{Op: "lstat", Path: t.where(rel), Err: err}
	}
	return st, nil
}

// readlink reads the link rel, in a directory reached beneath t.
func (t *tree) readlink(rel string) (string, error) {
	dir, base := filepath.Split(rel)
	fd, err := t.open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, base, buf)
	if err != nil {
		return "", &os.PathError{Op: "readlink", Path: t.where(rel), Err: err}
	}
	return string(buf[:n]), nil
}

// read reads rel, which must be a plain file: a session may have left a
// link there to a file of the user's, or a pipe that would block the
// command for ever.
func (t *tree) read(rel string) ([]byte, error) {
	fd, err := t.open(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, errNotFollowed) {
			return nil, fmt.Errorf("%s is not a plain file", t.where(rel))
		}
		return nil, err
	}
	f := os.NewFile(uintptr(fd), t.where(rel))
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a plain file", t.where(rel))
	}
	return io.ReadAll(f)
}

// names lists the directory rel beneath t.
func (t *tree) names(rel string) ([]string, error) {
	fd, err := t.open(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), t.where(rel))
	defer f.Close()
	return f.Readdirnames(-1)
}

// mkdir makes the directory rel beneath t, when it is not there.
func (t *tree) mkdir(rel string, mode uint32) error {
	dir, base := filepath.Split(rel)
	fd, err := t.open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Mkdirat(fd, base, mode); err != nil && !errors.Is(err, unix.EEXIST) {
		return &os.PathError{Op: "mkdir", Path: t.where(rel), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("%s is not a directory", t.where(rel))
	}
	return nil
}

// write writes data to rel beneath t, replacing a plain file there.
func (t *tree) write(rel string, data []byte, mode uint32) error {
	fd, err := t.open(rel, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, mode)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), t.where(rel))
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxDepth bounds a removal's descent: one descriptor is open per level,
// and a session can make a tree deeper than any path.
const maxDepth = 1024

// removeAll removes rel beneath t and everything below it, walking by
// descriptor: every directory is opened beneath the one above it, every
// name removed with unlinkat there, and a link is removed, never followed.
// A directory a session renames away during the walk is emptied where it
// went (still in the store); one it puts in its place is removed in
// another pass.
func (t *tree) removeAll(rel string) error {
	dir, base := filepath.Split(filepath.Clean(rel))
	if base == "." || base == ".." || base == "" {
		return fmt.Errorf("%s: not a name to remove", t.where(rel))
	}
	fd, err := t.open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	defer unix.Close(fd)
	if err := removeAt(fd, base, 0); err != nil {
		return fmt.Errorf("removing %s: %w", t.where(rel), err)
	}
	return nil
}

// removeAt removes name in the directory dirfd, and what is below it.
func removeAt(dirfd int, name string, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("more than %d directories deep", maxDepth)
	}
	for range 3 {
		err := unix.Unlinkat(dirfd, name, 0)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EISDIR) {
			return err
		}
		fd, err := unix.Openat2(dirfd, name, &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: beneath})
		switch {
		case errors.Is(err, unix.ENOENT):
			return nil
		case errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
			continue // swapped for a file or a link since: unlinked in the next pass
		case err != nil:
			return err
		}
		if err := emptyDir(fd, depth); err != nil {
			return err
		}
		err = unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
			return err
		}
	}
	return fmt.Errorf("%s changed while it was removed", name)
}

// emptyDir removes everything in the directory fd, and closes it.
func emptyDir(fd, depth int) error {
	f := os.NewFile(uintptr(fd), "")
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := removeAt(fd, n, depth+1); err != nil {
			return err
		}
	}
	return nil
}
