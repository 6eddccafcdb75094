package verify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The warden's checks. The warden refuses a ".git" (in any case) wherever
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
	return "", fmt.Errorf("mkdir %s failed with %v, not the warden's EPERM", probe, err)
}

// gitDirPrivate: the sandbox's own /tmp may hold a repository: what is made
// there vanishes with the session.
func gitDirPrivate(*facts) (string, error) {
	dir, err := os.MkdirTemp("/tmp", "verify-git-")
	if err != nil {
		return "", fmt.Errorf("cannot make a directory in /tmp: %v", err)
	}
	defer os.RemoveAll(dir)
	if err := unix.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		return "", fmt.Errorf("mkdir %s/.git: %v; the sandbox's own /tmp should allow it", dir, err)
	}
	return "a .git can be made in the sandbox's own /tmp", nil
}
