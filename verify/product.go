package verify

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
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
	return allReadOnly(exe, filepath.Dir(exe), layout.LauncherBinary, filepath.Dir(layout.LauncherBinary))
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
	return allReadOnly(layout.ManagedSettings, filepath.Dir(layout.ManagedSettings))
}

// outsideSettingsCovered: a Claude Code started outside the sandbox runs
// nothing this session wrote (ADR 0017): the managed lock-down for it is
// there (the launch covered it), and inside it is the settings that set
// nothing, read-only, so this session keeps the user's hooks and MCP
// servers.
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
	if same, err := sameFile(p, f.launch.launch.InsideSettings); err != nil {
		return "", err
	} else if !same {
		return "", fmt.Errorf("%s is covered by something other than %s", p, f.launch.launch.InsideSettings)
	}
	if _, err := readOnly(p); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s locks Claude Code outside; inside it is %s, read-only", p, f.launch.launch.InsideSettings), nil
}
