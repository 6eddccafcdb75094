package launcher

import (
	"os"
	"path/filepath"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/jsonc"
)

// wireStatusLine adds the product's status line to the user's settings.json
// when it has none: a status line the user set, or a statusLine key of any
// value, is kept. It runs as the user, before the sandbox binds the file
// read-only; a file it cannot read or parse is left for Claude Code to
// report, and the launch goes on either way, since the line is a display.
func wireStatusLine(path string) {
	fi, err := os.Lstat(path) // a link is refused by the policy before this runs
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return
	}
	next, changed, err := jsonc.AddIfAbsent(old, "statusLine", layout.StatusLine)
	if err != nil || !changed {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".settings.json.*")
	if err != nil {
		return
	}
	_, err = tmp.Write(next)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), fi.Mode().Perm())
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}
