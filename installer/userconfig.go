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
// owners and symlinks.
func copyTree(dst, src string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.IsDir():
			if err := os.MkdirAll(target, fi.Mode().Perm()); err != nil {
				return err
			}
		case fi.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			os.Remove(target)
			if err := os.Symlink(link, target); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if err := copyFile(target, p, fi.Mode().Perm()); err != nil {
				return err
			}
		default:
			return nil // sockets and devices are not configuration
		}
		return os.Lchown(target, int(st.Uid), int(st.Gid))
	})
}

func copyFile(dst, src string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
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
