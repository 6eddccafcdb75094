package launcher

import (
	"os"

	"github.com/claude-sandbox/claude-sandbox/internal/atomicfile"
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
	atomicfile.Write(path, next, fi.Mode().Perm())
}
