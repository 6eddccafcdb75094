package installer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"

	"golang.org/x/sys/unix"
)

// planUserConfig links the remote user's ~/.claude and ~/.claude.json into
// the shared mount. Nothing the user has is deleted: data goes to the share
// when the share has none, and is otherwise kept in a backup beside it.
func (in *run) planUserConfig() error {
	share := in.path(layout.SharedConfig)
	if fi, err := os.Stat(share); err != nil || !fi.IsDir() {
		return nil
	}
	home := in.homeOf(in.opts.User)
	if home == "" {
		return nil
	}
	uid, gid := in.ids(in.opts.User)
	for _, entry := range []struct {
		name string
		dir  bool
	}{{".claude", true}, {".claude.json", false}} {
		if err := in.planShared(filepath.Join(home, entry.name), filepath.Join(layout.SharedConfig, entry.name), entry.dir, uid, gid); err != nil {
			return err
		}
	}
	return nil
}

func (in *run) planShared(homePath, sharePath string, dir bool, uid, gid int) error {
	h, s := in.path(homePath), in.path(sharePath)
	link := func() error {
		if err := ensureShared(s, dir, uid, gid); err != nil {
			return err
		}
		if err := symlinkAtomic(sharePath, h); err != nil {
			return err
		}
		return os.Lchown(h, uid, gid)
	}
	fi, err := os.Lstat(h)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		in.add(fmt.Sprintf("linked %s to %s", homePath, sharePath), "", link)
	case err != nil:
		return err
	case fi.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(h)
		if target == sharePath {
			return nil
		}
		in.add(fmt.Sprintf("relinked %s to %s (it linked to %s)", homePath, sharePath, target), "", link)
	case isMountpoint(h):
		return nil // already shared by a mount of its own
	case shareEmpty(s, dir):
		in.add(fmt.Sprintf("moved %s into %s and linked it (the original is kept as %s)", homePath, sharePath, backupName(homePath)), "", func() error {
			if err := copyTree(s, h); err != nil {
				return err
			}
			if err := os.Rename(h, in.path(backupName(homePath))); err != nil {
				return err
			}
			return link()
		})
	default:
		in.add(fmt.Sprintf("linked %s to %s, which already has data (yours is kept as %s)", homePath, sharePath, backupName(homePath)), "", func() error {
			if err := os.Rename(h, in.path(backupName(homePath))); err != nil {
				return err
			}
			return link()
		})
	}
	return nil
}

var backupTime = time.Now().UTC().Format("20060102T150405Z")

func backupName(p string) string { return p + ".before-claude-sandbox-" + backupTime }

func ensureShared(s string, dir bool, uid, gid int) error {
	if _, err := os.Lstat(s); err == nil {
		return nil
	}
	if dir {
		if err := os.Mkdir(s, 0o700); err != nil {
			return err
		}
	} else if err := writeAtomic(s, []byte("{}\n"), 0o600); err != nil {
		return err
	}
	return os.Lchown(s, uid, gid)
}

func shareEmpty(s string, dir bool) bool {
	fi, err := os.Lstat(s)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	if !dir {
		return fi.Mode().IsRegular() && fi.Size() == 0
	}
	entries, err := os.ReadDir(s)
	return err == nil && len(entries) == 0
}

// isMountpoint: a path on another device than its parent is a mount.
func isMountpoint(p string) bool {
	a, err1 := os.Lstat(p)
	b, err2 := os.Lstat(filepath.Dir(p))
	if err1 != nil || err2 != nil {
		return false
	}
	return a.Sys().(*syscall.Stat_t).Dev != b.Sys().(*syscall.Stat_t).Dev
}

// copyTree copies src (a file or a directory tree) to dst, keeping modes,
// owners and symlinks. It runs as root on trees the user (and a session's
// sandbox, through ~/.claude) can change while it runs, so it works from
// directory descriptors and never follows a link: a name swapped for a
// link between a look and an open, on either side, is an error, not a
// read or a write of what the link names.
func copyTree(dst, src string) error {
	srcDir, err := unix.Open(filepath.Dir(src), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: filepath.Dir(src), Err: err}
	}
	defer unix.Close(srcDir)
	dstDir, err := unix.Open(filepath.Dir(dst), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: filepath.Dir(dst), Err: err}
	}
	defer unix.Close(dstDir)
	return copyEntry(dstDir, filepath.Base(dst), srcDir, filepath.Base(src), src)
}

// copyEntry copies the entry name of srcDir to dstName in dstDir; at is
// its path, for errors. What it makes did not exist, or is the empty
// share it replaces (shareEmpty).
func copyEntry(dstDir int, dstName string, srcDir int, name, at string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(srcDir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "lstat", Path: at, Err: err}
	}
	var err error
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		err = copyDir(dstDir, dstName, srcDir, name, at, st)
	case unix.S_IFLNK:
		err = copyLink(dstDir, dstName, srcDir, name, st)
	case unix.S_IFREG:
		err = copyRegular(dstDir, dstName, srcDir, name, st)
	default:
		return nil // sockets and devices are not configuration
	}
	if err != nil {
		return &fs.PathError{Op: "copy", Path: at, Err: err}
	}
	return nil
}

func copyDir(dstDir int, dstName string, srcDir int, name, at string, st unix.Stat_t) error {
	if err := unix.Mkdirat(dstDir, dstName, 0o700); err != nil && err != unix.EEXIST {
		return err
	}
	to, err := unix.Openat(dstDir, dstName, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(to)
	from, err := unix.Openat(srcDir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	dir := os.NewFile(uintptr(from), at)
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := copyEntry(to, n, from, n, filepath.Join(at, n)); err != nil {
			return err
		}
	}
	if err := unix.Fchmod(to, st.Mode&0o777); err != nil {
		return err
	}
	return unix.Fchown(to, int(st.Uid), int(st.Gid))
}

func copyLink(dstDir int, dstName string, srcDir int, name string, st unix.Stat_t) error {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(srcDir, name, buf)
	if err != nil {
		return err
	}
	if err := unix.Symlinkat(string(buf[:n]), dstDir, dstName); err != nil {
		return err
	}
	return unix.Fchownat(dstDir, dstName, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW)
}

func copyRegular(dstDir int, dstName string, srcDir int, name string, st unix.Stat_t) error {
	// O_NONBLOCK: a name swapped for a FIFO does not hold the install.
	from, err := unix.Openat(srcDir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	in := os.NewFile(uintptr(from), name)
	defer in.Close()
	if fi, err := in.Stat(); err != nil || !fi.Mode().IsRegular() {
		return errors.New("no longer a regular file")
	}
	to, err := unix.Openat(dstDir, dstName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err == unix.EEXIST {
		// The empty share file a copy replaces (shareEmpty), never a
		// link.
		to, err = unix.Openat(dstDir, dstName, unix.O_WRONLY|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return err
	}
	out := os.NewFile(uintptr(to), dstName)
	if fi, err := out.Stat(); err != nil || !fi.Mode().IsRegular() {
		out.Close()
		return errors.New("the copy's name is not a regular file")
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := unix.Fchmod(to, st.Mode&0o777); err != nil {
		out.Close()
		return err
	}
	if err := unix.Fchown(to, int(st.Uid), int(st.Gid)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ids returns the user's uid and gid from the target's passwd, or root's.
func (in *run) ids(user string) (int, int) {
	e := in.passwdEntry(0, user)
	if e == nil {
		return 0, 0
	}
	uid, _ := strconv.Atoi(e[2])
	gid, _ := strconv.Atoi(e[3])
	return uid, gid
}
