package warden

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// gitStore is a GitStore with its directory held open.
type gitStore struct {
	GitStore
	fd int // O_PATH
}

func openGitStore(s GitStore) (*gitStore, error) {
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
	private, why, errno := w.refuseByRule(r.dir, r.name, emptyDir)
	if errno != 0 {
		if w.Refused != nil {
			w.Refused(fdPath(r.dir)+"/"+r.name, why)
		}
		return false, errno
	}
	return !private, 0
}

// makeInGitStore makes the ".git" r names in the git store, a directory
// (dir) or a file opened with flags, then the link at r to its path
// inside. The entry is made first, so the link never leads to nothing
// inside; should the link fail, the entry is removed again. A file's
// descriptor is returned.
func (w *Warden) makeInGitStore(t *task, r resolved, dir bool, flags int, mode uint32) (int, unix.Errno) {
	if e := setUmask(t); e != 0 {
		return -1, e
	}
	name, err := storeName(fdPath(r.dir))
	if err != nil {
		return -1, unix.EIO
	}
	fd := -1
	if dir {
		err = unix.Mkdirat(w.store.fd, name, mode)
	} else {
		fd, err = unix.Openat(w.store.fd, name, flags|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, mode)
	}
	if err != nil {
		return -1, errnoOf(err)
	}
	err = unix.Symlinkat(w.store.Inside+"/"+name, r.dir, r.name)
	if err == nil {
		return fd, 0
	}
	if dir {
		unix.Unlinkat(w.store.fd, name, unix.AT_REMOVEDIR)
		return -1, errnoOf(err)
	}
	unix.Close(fd)
	unix.Unlinkat(w.store.fd, name, 0)
	if err == unix.EEXIST && flags&unix.O_EXCL == 0 {
		// Another call made the ".git" meanwhile: open what it made, as
		// the kernel would (the open walks again on ELOOP).
		return -1, unix.ELOOP
	}
	return -1, errnoOf(err)
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

// onInsideOnly reports whether the directory fd is directly on one of the
// git store's mounts.
func (w *Warden) onInsideOnly(fd int) bool {
	if len(w.onlyMounts) == 0 {
		return false
	}
	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &stx) != nil || stx.Mask&unix.STATX_MNT_ID == 0 {
		return false
	}
	return w.onlyMounts[stx.Mnt_id]
}
