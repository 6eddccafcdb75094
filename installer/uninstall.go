package installer

import (
	"fmt"
	"io"
	"os"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// ourSettings is the managed settings file the installer writes when there
// was none; uninstall removes it only if it is still exactly that.
const ourSettings = `{
  "env": {
    "DISABLE_AUTOUPDATER": "1"
  },
  "hooks": {
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "` + layout.GateCommand + `",
            "onFailure": "block"
          }
        ]
      }
    ]
  }
}
`

// Uninstall restores a plain Claude Code install: the real binary goes back
// on PATH at /usr/local/bin/claude, the product's files and links go, the
// admin's conf is kept as a backup, and the user's data is not touched.
func Uninstall(o Options, environ []string, out io.Writer) error {
	in, unlock, err := start(o, environ, out, "uninstall must run as root")
	if err != nil {
		return err
	}
	defer unlock()
	real := in.path(layout.RealBinary)
	if _, err := os.Stat(real); err == nil {
		in.add("put the real Claude Code back at "+layout.LauncherLink, "", func() error { return copyAtomic(in.path(layout.LauncherLink), real, 0o755) })
	}
	for _, p := range append(in.claudesOnPath(), layout.ToolLink) {
		if target, err := os.Readlink(in.path(p)); err == nil && target == layout.LauncherBinary {
			in.add("removed the link "+p, "", func() error { return os.Remove(in.path(p)) })
		}
	}
	in.planLegacyRestore()
	if _, err := os.Stat(in.path(layout.LibexecDir)); err == nil {
		in.add("removed "+layout.LibexecDir, "", func() error { return os.RemoveAll(in.path(layout.LibexecDir)) })
	}
	if _, err := os.Stat(in.path(layout.Conf)); err == nil {
		backup := layout.Conf + ".bak"
		in.add(fmt.Sprintf("moved %s to %s", layout.Conf, backup), "", func() error {
			return os.Rename(in.path(layout.Conf), in.path(backup))
		})
	}
	if err := in.planManagedRemoval(out); err != nil {
		return err
	}
	in.planOutsideRemoval()
	if err := in.planCommandRemoval(); err != nil {
		return err
	}
	if err := in.planGitConfigRemoval(); err != nil {
		return err
	}
	return in.apply()
}
