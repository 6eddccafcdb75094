package verify

import (
	"fmt"
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

// outsideSettingsCovered: a Claude Code started outside the sandbox runs
// nothing this session wrote (ADR 0012): the managed lock-down for it is
// there (the launch covered it), and inside it reads empty, so this
// session keeps the user's hooks and MCP servers.
func outsideSettingsCovered(f *facts) (string, error) {
	if err := firstError(f.mountsErr, f.launchErr); err != nil {
		return "", err
	}
	p := f.launch.launch.OutsideSettings
	if p == "" {
		return "", fmt.Errorf("there is no %s: a Claude Code started outside the sandbox would run the MCP servers this session can add to ~/.claude.json; run `sudo claude-sandbox install`", f.paths.OutsideSettings)
	}
	if _, ok := f.mountAt(p); !ok {
		return "", fmt.Errorf("%s is not covered: this session runs under the lock-down meant for Claude Code outside", p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	if len(b) > 0 {
		return "", fmt.Errorf("%s reads %d bytes inside, not an empty file", p, len(b))
	}
	return p + " locks Claude Code outside; inside it reads empty", nil
}
