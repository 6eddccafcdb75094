package installer

import (
	"fmt"
	"io"
	"os"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
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
            "command": "` + GateCommand + `",
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
	real := in.path(RealBinary)
	if _, err := os.Stat(real); err == nil {
		in.add("put the real Claude Code back at "+LauncherLink, "", func() error { return copyAtomic(in.path(LauncherLink), real, 0o755) })
	}
	for _, p := range append(in.claudesOnPath(), ToolLink) {
		if target, err := os.Readlink(in.path(p)); err == nil && target == LauncherBinary {
			in.add("removed the link "+p, "", func() error { return os.Remove(in.path(p)) })
		}
	}
	in.planLegacyRestore()
	if _, err := os.Stat(in.path("/usr/libexec/claude-sandbox")); err == nil {
		in.add("removed /usr/libexec/claude-sandbox", "", func() error { return os.RemoveAll(in.path("/usr/libexec/claude-sandbox")) })
	}
	if _, err := os.Stat(in.path(sandbox.ConfPath)); err == nil {
		backup := sandbox.ConfPath + ".bak"
		in.add(fmt.Sprintf("moved %s to %s", sandbox.ConfPath, backup), "", func() error {
			return os.Rename(in.path(sandbox.ConfPath), in.path(backup))
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
