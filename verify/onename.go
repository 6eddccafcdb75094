package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// heldFilesOneName: every regular file the plan holds read-only by path,
// and every one below a directory it holds, has one name: no other name,
// which no bind covers, writes it (ADR 0039).
func heldFilesOneName(f *facts) (string, error) {
	if f.launchErr != nil {
		return "", f.launchErr
	}
	files := 0
	for _, m := range f.launch.plan.Mounts {
		if !m.Op.ReadOnly() || !m.Rule.HoldsByPath() {
			continue
		}
		n, err := oneNameBelow(m.Dest)
		if err != nil {
			return "", err
		}
		files += n
	}
	return fmt.Sprintf("%d held files, each with one name", files), nil
}

// oneNameBelow counts the regular files at root or below it, as the bind
// holds them (a link at root followed, links below it not), and fails on
// the first with another name.
func oneNameBelow(root string) (int, error) {
	resolved, err := filepath.EvalSymlinks(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil // a missing share-home file: nothing is held
	}
	if err != nil {
		return 0, fmt.Errorf("cannot check %s for other names: %w", root, err)
	}
	files := 0
	err = filepath.WalkDir(resolved, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("cannot check %s for other names: %w", path, err)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return fmt.Errorf("cannot check %s for other names: %w", path, err)
		}
		if st.Nlink > 1 {
			return fmt.Errorf("%s is held read-only but has %d names (hard links): a session could write it by another", path, st.Nlink)
		}
		files++
		return nil
	})
	return files, err
}

// keptLoginHidden: the directory where the launcher keeps Claude's login
// is the sandbox's own tmpfs, in every credential mode: nothing of the
// kept login is here by any name (ADR 0039).
func keptLoginHidden(f *facts) (string, error) {
	if err := firstError(f.mountsErr, f.launchErr); err != nil {
		return "", err
	}
	dir := filepath.Join(f.launch.launch.Home, layout.KeptLoginDir)
	if err := f.ownTmpfs(dir); err != nil {
		return "", err
	}
	return dir + " is the sandbox's own tmpfs", nil
}
