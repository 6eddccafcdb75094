package warden

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

// gitStore is a namerule.GitStore with its directory held open.
type gitStore struct {
	namerule.GitStore
	fd int // O_PATH
}

func openGitStore(s namerule.GitStore) (*gitStore, error) {
	if !filepath.IsAbs(s.Inside) || filepath.Clean(s.Inside) != s.Inside {
		return nil, fmt.Errorf("warden: the git store's inside path %q is not absolute and clean", s.Inside)
	}
	fd, err := unix.Open(s.Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("warden: %s: %w", s.Dir, err)
	}
	return &gitStore{s, fd}, nil
}

// toGitStore reports whether r, a name about to be made, is a new ".git"
// that belongs in the git store: spelled as git spells it, missing, where
// the outside can see it, and allowed by every rule of the plan. Any other
// spelling stays refused as an outside name. A rule's refusal is reported
// and returned.
func (w *Warden) toGitStore(r resolved, emptyDir bool) (bool, unix.Errno) {
	if w.store == nil || r.dir < 0 || r.name != ".git" {
		return false, 0
	}
	var st unix.Stat_t
	if unix.Fstatat(r.dir, r.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return false, 0
	}
	seen, why, errno := w.refuseByRule(r.dir, r.name, emptyDir)
	if errno != 0 {
		if w.Refused != nil {
			w.Refused(fdPath(r.dir)+"/"+r.name, why)
		}
		return false, errno
	}
	return seen != seenInside, 0
}

// makeInGitStore makes the ".git" r names in the git store, a directory
// (dir) or a file opened with flags (in an entry of its own, fileEntry),
// then the link at r to its path inside. The entry is made first, so the
// link never leads to nothing inside; should the link fail, the entry is
// removed again. A file's descriptor is returned.
func (w *Warden) makeInGitStore(t *task, r resolved, dir bool, flags int, mode uint32) (int, unix.Errno) {
	if e := setUmask(t); e != 0 {
		return -1, e
	}
	where := fdPath(r.dir)
	name, err := storeName(where)
	if err != nil {
		return -1, unix.EIO
	}
	fd, target := -1, name
	if dir {
		err = unix.Mkdirat(w.store.fd, name, mode)
	} else {
		target, err = w.store.fileEntry(name, where)
		if err == nil {
			fd, err = unix.Openat(w.store.fd, target, flags|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, mode)
		}
	}
	if err != nil {
		os.RemoveAll(filepath.Join(w.store.Dir, name))
		return -1, errnoOf(err)
	}
	err = unix.Symlinkat(w.store.Inside+"/"+target, r.dir, r.name)
	if err == nil {
		return fd, 0
	}
	if fd >= 0 {
		unix.Close(fd)
	}
	os.RemoveAll(filepath.Join(w.store.Dir, name))
	if err == unix.EEXIST && !dir && flags&unix.O_EXCL == 0 {
		// Another call made the ".git" meanwhile: open what it made, as
		// the kernel would (the open walks again on ELOOP).
		return -1, unix.ELOOP
	}
	return -1, errnoOf(err)
}

// fileEntry makes the entry name of the store for a ".git" file (a
// "gitdir:" link) of the directory where, as the sandbox sees it, and
// returns the path of the file in the store. git writes a relative path
// there for a submodule ("gitdir: ../.git/modules/NAME"), and reads it
// from the file's directory, at times through the link: so the file lies
// as deep in the entry as where lies below the root, and at every level
// above it a ".git" leads to that level's counterpart's, so that a path
// going up and into a ".git" reaches what it reaches from where. All of it
// is seen only inside.
func (s *gitStore) fileEntry(name, where string) (string, error) {
	var parts []string
	if where != "/" {
		parts = strings.Split(strings.TrimPrefix(where, "/"), "/")
	}
	if err := unix.Mkdirat(s.fd, name, 0o700); err != nil {
		return "", err
	}
	file := name
	for range parts {
		file += "/d"
		if err := unix.Mkdirat(s.fd, file, 0o700); err != nil {
			return "", err
		}
	}
	for j := 1; j <= len(parts); j++ {
		level := name + strings.Repeat("/d", len(parts)-j)
		ancestor := "/" + strings.Join(parts[:len(parts)-j], "/")
		if err := unix.Symlinkat(filepath.Join(ancestor, ".git"), s.fd, level+"/.git"); err != nil {
			return "", err
		}
	}
	return file + "/.git", nil
}

// storeName is a new name in the git store for the ".git" of the directory
// dir: its base name, for people listing the store (letters, digits and
// ". _ -" of it), and 64 random bits.
func storeName(dir string) (string, error) {
	base := strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return -1
	}, filepath.Base(dir))
	base = strings.TrimLeft(base, ".")
	if len(base) > 40 {
		base = base[:40]
	}
	if base == "" {
		base = "repo"
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base + "-" + hex.EncodeToString(b[:]), nil
}

// insideOnlyMounts are the IDs of the mounts at paths, looked up from the
// sandbox's root without following links. A path that is not a mount's
// root is left out: its rules apply in full (fail closed). The sandbox
// can make no mounts, so the IDs hold for the session.
func insideOnlyMounts(root int, paths []string) map[uint64]bool {
	ids := map[uint64]bool{}
	for _, p := range paths {
		fd, err := unix.Openat2(root, strings.TrimPrefix(p, "/"), &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			continue
		}
		var stx unix.Statx_t
		err = unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &stx)
		unix.Close(fd)
		if err == nil && stx.Mask&unix.STATX_MNT_ID != 0 && stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0 {
			ids[stx.Mnt_id] = true
		}
	}
	return ids
}

// onInsideOnly reports whether fd, at the path p as the sandbox sees it,
// is directly on one of the git store's mounts.
func (w *Warden) onInsideOnly(p string, fd int) bool {
	store, _ := w.onStore(p, fd)
	return store
}

// onStore reports whether fd, at the path p as the sandbox sees it, is
// directly on one of the git store's mounts (its path lies below one, and
// its mount is that one, not another bound on top), and whether that is
// one of the store's checkouts.
func (w *Warden) onStore(p string, fd int) (store, checkout bool) {
	below := false
	for _, o := range w.insideOnly {
		if p == o || strings.HasPrefix(p, o+"/") {
			below = true
			break
		}
	}
	if !below || len(w.onlyMounts) == 0 {
		return false, false
	}
	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &stx) != nil || stx.Mask&unix.STATX_MNT_ID == 0 {
		return false, false
	}
	return w.onlyMounts[stx.Mnt_id], w.checkoutMounts[stx.Mnt_id]
}

// A copyThrough is a namerule.CopyThrough by the identity of its copy.
type copyThrough struct {
	name   string
	store  fileID
	launch string // the copy as the launch read it
}

func copyThroughs(cs []namerule.CopyThrough) (map[fileID]copyThrough, error) {
	out := map[fileID]copyThrough{}
	for _, c := range cs {
		var dir, store unix.Stat_t
		if err := unix.Stat(c.Dir, &dir); err != nil {
			return nil, fmt.Errorf("warden: %s: %w", c.Dir, err)
		}
		if err := unix.Lstat(c.Store, &store); err != nil {
			return nil, fmt.Errorf("warden: %s: %w", c.Store, err)
		}
		out[fileID{dir.Dev, dir.Ino}] = copyThrough{c.Name, fileID{store.Dev, store.Ino}, c.Launch}
	}
	return out, nil
}

// isCopy reports whether name, in the directory dir (whose identity is
// id), is a copy-through name that holds the sandbox's copy now: should a
// program outside replace the file there, its mount dissolves and the
// name is the real file again, which stays refused. The name must be
// spelled as it is: another spelling is another name on another file
// system. What a call then does by the name is checked again on the
// descriptor it acts through (heldCopy): the mount can dissolve between.
func (w *Warden) isCopy(id fileID, dir int, name string) bool {
	var st unix.Stat_t
	return w.copyNamed(id, name) && unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && w.heldCopy(id, &st)
}

// copyNamed reports whether name in the directory id is a copy-through
// name, whatever it holds.
func (w *Warden) copyNamed(id fileID, name string) bool {
	c, ok := w.copies[id]
	return ok && c.name == name
}

// heldCopy reports whether st, of a file reached by a copy-through name in
// the directory id, is the sandbox's copy.
func (w *Warden) heldCopy(id fileID, st *unix.Stat_t) bool {
	return w.copies[id].store == fileID{st.Dev, st.Ino}
}

// copyFD checks a descriptor opened by name in r: if the name is a
// copy-through name, the descriptor must be the sandbox's copy, or the
// call is refused as the name's rule refuses it (EROFS).
func (w *Warden) copyFD(r resolved, fd int) unix.Errno {
	if r.dir < 0 {
		return 0
	}
	var dir, st unix.Stat_t
	if unix.Fstat(r.dir, &dir) != nil {
		return unix.EPERM
	}
	id := fileID{dir.Dev, dir.Ino}
	if !w.copyNamed(id, r.name) {
		return 0
	}
	if unix.Fstat(fd, &st) != nil || !w.heldCopy(id, &st) {
		if w.Refused != nil {
			w.Refused(fdPath(r.dir)+"/"+r.name, "no longer the sandbox's copy: a program outside replaced it")
		}
		return unix.EROFS
	}
	return 0
}

// copyName reports whether r names a copy-through name.
func (w *Warden) copyName(r resolved) bool {
	if r.dir < 0 {
		return false
	}
	named := false
	for _, c := range w.copies {
		named = named || c.name == r.name
	}
	var dir unix.Stat_t
	return named && unix.Fstat(r.dir, &dir) == nil && w.copyNamed(fileID{dir.Dev, dir.Ino}, r.name)
}

// openCopy opens a copy-through name, which check let through as the
// sandbox's copy: never made anew, and truncated only once the descriptor
// is known to be the copy.
func (w *Warden) openCopy(r resolved, flags int, statErr error) (int, unix.Errno) {
	if statErr != nil {
		return -1, unix.EROFS // gone since the check: the copy's mount dissolved
	}
	if flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL {
		return -1, unix.EEXIST
	}
	fd, err := unix.Openat(r.dir, r.name, flags&^(unix.O_CREAT|unix.O_TRUNC)|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, errnoOf(err)
	}
	if e := w.copyFD(r, fd); e != 0 {
		unix.Close(fd)
		return -1, e
	}
	if flags&unix.O_TRUNC != 0 {
		if err := unix.Ftruncate(fd, 0); err != nil {
			unix.Close(fd)
			return -1, errnoOf(err)
		}
	}
	return fd, 0
}

// copyInto carries out a rename of from over to, a copy-through name: to
// is a mount point, which no rename may replace, so from's content is
// copied into it and from removed, as git expects of its rename of
// config.lock over config. A reader inside may see the copy half written.
func (w *Warden) copyInto(from, to resolved) unix.Errno {
	if from.dir < 0 {
		return unix.EXDEV
	}
	src, err := unix.Openat(from.dir, from.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(src)
	var st unix.Stat_t
	if err := unix.Fstat(src, &st); err != nil {
		return errnoOf(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return unix.EISDIR
	}
	dst, err := unix.Openat(to.dir, to.name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(dst)
	if e := w.copyFD(to, dst); e != 0 {
		return e
	}
	if err := unix.Ftruncate(dst, 0); err != nil {
		return errnoOf(err)
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(src, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return errnoOf(err)
		}
		if n == 0 {
			break
		}
		for off := 0; off < n; {
			m, err := unix.Write(dst, buf[off:n])
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return errnoOf(err)
			}
			off += m
		}
	}
	return errnoOf(unix.Unlinkat(from.dir, from.name, 0))
}
