package verify

import (
	"os"
	"path/filepath"

	"github.com/claude-sandbox/claude-sandbox/installer"
)

// confReadOnly: the conf cannot be changed or replaced, so the session
// cannot widen the next sandbox.
func confReadOnly(f *facts) (string, error) {
	return allReadOnly(f.paths.Conf, filepath.Dir(f.paths.Conf))
}

// launcherReadOnly: the launcher (this binary, and the installed one)
// cannot be changed, so every later `claude` still starts a sandbox.
func launcherReadOnly(*facts) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return allReadOnly(exe, filepath.Dir(exe), installer.LauncherBinary, filepath.Dir(installer.LauncherBinary))
}

// realBinaryReadOnly: the real Claude Code cannot be changed, so what
// later sessions (and `claude` outside, through the launcher) run is the
// installed binary.
func realBinaryReadOnly(f *facts) (string, error) {
	return allReadOnly(f.paths.RealBinary, filepath.Dir(f.paths.RealBinary))
}

// managedSettingsReadOnly: Claude Code's managed settings (and the
// directory that also holds the /verify-sandbox command) cannot be
// changed, so the session cannot loosen Claude's own rules or fake this
// command.
func managedSettingsReadOnly(*facts) (string, error) {
	return allReadOnly(installer.ManagedPath, filepath.Dir(installer.ManagedPath))
}
