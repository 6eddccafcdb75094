package launcher

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/claude-sandbox/claude-sandbox/internal/atomicfile"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// heldHaveOneName makes sure every regular file a plan holds has one name:
// a second name a session made while the file was not held yet (a hooks
// directory enabled later) stays writable by that name. A git object with
// another name (a local clone's hard links) is replaced by a copy of its
// own, which git cannot tell apart; any other such file refuses the launch,
// naming the file and the fix: the launcher cannot know which name the user
// meant.
func heldHaveOneName(plan *sandbox.Plan) error {
	for _, m := range plan.Mounts {
		if m.Op.ReadOnly() && m.Rule.HoldsByPath() {
			if err := oneNameBelow(m.Source); err != nil {
				return err
			}
		}
	}
	return nil
}

// oneNameBelow checks the file at root, or every regular file below the
// directory at root, as bwrap binds it: a link at root is followed, links
// below it are not (they are not what the bind holds).
func oneNameBelow(root string) error {
	resolved, err := filepath.EvalSymlinks(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a share-home file that is missing: nothing is bound
	}
	if err != nil {
		return fmt.Errorf("cannot check %s, which the sandbox holds read-only, for other names: %w", root, cause(err))
	}
	return filepath.WalkDir(resolved, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("cannot check %s, which the sandbox holds read-only, for other names: %w", path, cause(err))
		}
		if !d.Type().IsRegular() {
			return nil
		}
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return fmt.Errorf("cannot check %s, which the sandbox holds read-only, for other names: %w", path, err)
		}
		if st.Nlink > 1 && gitObject(resolved, path) {
			return ownCopy(path)
		}
		if st.Nlink > 1 {
			return fmt.Errorf("%s, which the sandbox holds read-only, has %d names (hard links): a session could write it by another; make it a file of its own (cp -p %s %s.copy && mv %s.copy %s) and remove the other names if you do not need them", path, st.Nlink, path, path, path, path)
		}
		return nil
	})
}

// gitObject says whether path, below the held directory root, is in a git
// object store: git writes an object once and never again, and reads it
// the same from a copy, so a copy of its own changes nothing for git.
func gitObject(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && slices.Contains(strings.Split(filepath.Dir(rel), "/"), "objects")
}

// ownCopy replaces the file at path by a copy with one name: a new file
// made next to it, renamed over it, so that the other names keep the old
// file and reach nothing held.
func ownCopy(path string) error {
	fail := func(err error) error {
		return fmt.Errorf("cannot give %s, which the sandbox holds read-only and which has other names (hard links), a copy of its own: %w", path, err)
	}
	dir, err := unix.Open(filepath.Dir(path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(err)
	}
	defer unix.Close(dir)
	name := filepath.Base(path)
	src, err := openAt(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return fail(err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return fail(cmp.Or(err, error(unix.EINVAL)))
	}
	if err := atomicfile.CopyAt(dir, name, src, fi.Mode().Perm()); err != nil {
		return fail(err)
	}
	return nil
}

func openAt(dir int, name string, flags int, mode uint32) (*os.File, error) {
	fd, err := unix.Openat(dir, name, flags|unix.O_CLOEXEC, mode)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}
