package verify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/foldname"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"golang.org/x/sys/unix"
)

// The warden's checks. The warden refuses a ".git" (in any spelling) wherever
// the outside can see it, before it even looks whether the name exists, so
// the probe in the workspace never needs to make anything; and it lets the
// sandbox's own /tmp have one.

// gitDirRefused: a ".Git" cannot be made at the top of the workspace.
// Without the warden the probe would make it (and removes it again).
func gitDirRefused(f *facts) (string, error) {
	if err := f.launchErr; err != nil {
		return "", err
	}
	probe := filepath.Join(f.launch.plan.Workspace, ".Git")
	err := unix.Mkdir(probe, 0o755)
	switch {
	case errors.Is(err, unix.EPERM):
		return "mkdir " + probe + " is refused (EPERM): no repository can appear where git outside would enter it", nil
	case err == nil:
		unix.Rmdir(probe)
		return "", fmt.Errorf("mkdir %s succeeded (removed again): nothing refuses a .git in the workspace", probe)
	}
	return "", fmt.Errorf("mkdir %s failed with %w, not the warden's EPERM", probe, err)
}

// gitDirPrivate: the sandbox's own /tmp may hold a repository: what is made
// there vanishes with the session.
func gitDirPrivate(*facts) (string, error) {
	dir, err := os.MkdirTemp("/tmp", "verify-git-")
	if err != nil {
		return "", fmt.Errorf("cannot make a directory in /tmp: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := unix.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		return "", fmt.Errorf("mkdir %s/.git: %w; the sandbox's own /tmp should allow it", dir, err)
	}
	return "a .git can be made in the sandbox's own /tmp", nil
}

// gitStore: a ".git" made in the workspace is made in the workspace's git
// store, and its name is a link to the store's path inside, which leads
// nowhere outside (ADR 0034). The probe is made in a new directory of the
// workspace and removed again, store entry and all.
func gitStore(f *facts) (string, error) {
	if err := f.launchErr; err != nil {
		return "", err
	}
	ws := f.launch.plan.Workspace
	if errors.Is(unix.Access(ws, unix.W_OK), unix.EACCES) {
		// Another user's workspace (workspace-writable tells): nothing,
		// and no .git, can be made in it, outside as inside.
		return "the workspace " + ws + " is not this user's to write: no .git can be made in it", nil
	}
	dir, err := os.MkdirTemp(ws, ".verify-git-store-")
	if err != nil {
		return "", fmt.Errorf("cannot make a directory in the workspace: %w", err)
	}
	defer os.RemoveAll(dir)
	dotGit := filepath.Join(dir, ".git")
	if err := unix.Mkdir(dotGit, 0o755); err != nil {
		return "", fmt.Errorf("mkdir %s: %w; the warden should make it in the git store", dotGit, err)
	}
	target, err := os.Readlink(dotGit)
	if err != nil {
		return "", fmt.Errorf("%s is not a link into the git store: %w", dotGit, err)
	}
	defer os.RemoveAll(target)
	name, ok := strings.CutPrefix(target, layout.InsideGitStore+"/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("%s leads to %s, not into the git store %s", dotGit, target, layout.InsideGitStore)
	}
	if fi, err := os.Lstat(target); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s leads to %s, which is no directory of the git store: %v", dotGit, target, err)
	}
	return "mkdir " + dotGit + " made a link to " + target + ", a directory of the git store, which leads nowhere outside (removed again)", nil
}

// workspaceCase: whether the workspace's file system finds a name in
// another case, and that the warden refuses ".git" in the spellings such a
// file system, or Windows, takes for it (ADR 0033). The rule holds on
// either, so either passes. The warden answers EPERM for an outside name
// and EROFS where a spelling is also one of a protected path's (GIT~1 is
// as much .gitmodules' short name as .git's); an EROFS counts only while
// the workspace's own mount is writable, so it cannot be the file
// system's.
func workspaceCase(f *facts) (string, error) {
	if err := f.launchErr; err != nil {
		return "", err
	}
	ws := f.launch.plan.Workspace
	var sfs unix.Statfs_t
	if err := unix.Statfs(ws, &sfs); err != nil {
		return "", fmt.Errorf("statfs %s: %w", ws, err)
	}
	if sfs.Flags&unix.ST_RDONLY != 0 {
		return "", fmt.Errorf("the workspace %s is mounted read-only: a refusal cannot be told from the file system's", ws)
	}
	var answers []string
	for _, name := range []string{".GIT", "GIT~1", ".git."} {
		probe := filepath.Join(ws, name)
		err := unix.Mkdir(probe, 0o755)
		switch {
		case err == nil:
			unix.Rmdir(probe)
			return "", fmt.Errorf("mkdir %s succeeded (removed again): the warden does not refuse this spelling of .git", probe)
		case errors.Is(err, unix.EPERM):
			answers = append(answers, name+" EPERM")
		case errors.Is(err, unix.EROFS):
			answers = append(answers, name+" EROFS")
		default:
			return "", fmt.Errorf("mkdir %s failed with %w, not one of the warden's refusals (EPERM, EROFS)", probe, err)
		}
	}
	state := "is not known to fold case"
	if folds, how := foldname.Folds(ws); folds {
		state = "folds case: " + how
	} else {
		state += ": " + how
	}
	return "the workspace " + state + "; refused: " + strings.Join(answers, ", "), nil
}

// wardenRefuses reports, as an error, whether the sandbox can write path:
// a directory gets a new file in it, a file is opened for writing (nothing
// is written), a missing path is made as a directory (or, where a
// directory on the way is missing too, that one as a file). nil means the
// warden refused with EROFS, as for a protected path. What a probe made is
// removed again.
func wardenRefuses(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// Its first missing component: at the path, no directory may be
		// made; on the way to it, only an empty one, so a file is tried.
		first := path
		for p := filepath.Dir(path); p != filepath.Dir(p); p = filepath.Dir(p) {
			if _, err := os.Lstat(p); err == nil {
				break
			}
			first = p
		}
		if first == path {
			if err := unix.Mkdir(path, 0o755); err == nil {
				unix.Rmdir(path)
				return fmt.Errorf("%s could be made", path)
			} else if !errors.Is(err, unix.EROFS) {
				return fmt.Errorf("making %s failed with %w, not the warden's EROFS", path, err)
			}
			return nil
		}
		fd, err := unix.Open(first, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
			unix.Unlink(first)
			return fmt.Errorf("a file %s could be made on the way to %s", first, path)
		} else if !errors.Is(err, unix.EROFS) {
			return fmt.Errorf("making a file %s on the way to %s failed with %w, not the warden's EROFS", first, path, err)
		}
	case err != nil:
		return err
	case fi.IsDir():
		probe := filepath.Join(path, fmt.Sprintf(".verify-%d", os.Getpid()))
		fd, err := unix.Open(probe, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
			unix.Unlink(probe)
			return fmt.Errorf("a file could be made in %s", path)
		} else if !errors.Is(err, unix.EROFS) {
			return fmt.Errorf("making a file in %s failed with %w, not EROFS", path, err)
		}
	default:
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
			return fmt.Errorf("%s could be opened for writing", path)
		} else if !errors.Is(err, unix.EROFS) {
			return fmt.Errorf("opening %s for writing failed with %w, not EROFS", path, err)
		}
	}
	return nil
}

// madeDuringSession reports whether path appeared after the sandbox was
// set up (its birth, else its change time, is later than the inside
// marker's, which bwrap made then): a protected path a program outside
// made during the session has no mount of its own, and the warden holds
// it instead.
func madeDuringSession(path string) bool {
	var marker, st unix.Statx_t
	const mask = unix.STATX_BTIME | unix.STATX_CTIME
	if unix.Statx(unix.AT_FDCWD, layout.InsideMarker, 0, mask, &marker) != nil ||
		unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, mask, &st) != nil {
		return false
	}
	when := func(s *unix.Statx_t) unix.StatxTimestamp {
		if s.Mask&unix.STATX_BTIME != 0 {
			return s.Btime
		}
		return s.Ctime
	}
	a, b := when(&st), when(&marker)
	return a.Sec > b.Sec || (a.Sec == b.Sec && a.Nsec > b.Nsec)
}
