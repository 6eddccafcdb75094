package launcher

import (
	"os"

	"github.com/claude-sandbox/claude-sandbox/internal/atomicfile"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/plainfile"
	"github.com/claude-sandbox/claude-sandbox/jsonc"
)

// maxSettingsFile bounds the user's settings.json the launch reads.
const maxSettingsFile = 4 << 20

// wireStatusLine adds the product's status line to the user's settings.json
// when it has none: a status line the user set, or a statusLine key of any
// value, is kept. It runs as the user, before the sandbox binds the file
// read-only; a file it cannot read or parse is left for Claude Code to
// report, and the launch goes on either way, since the line is a display.
func wireStatusLine(path string) {
	// A link is refused by the policy before this runs; a FIFO, a device,
	// another user's or a huge file is left alone, never waited on.
	old, err := plainfile.Read(path, plainfile.Limits{Max: maxSettingsFile, Owner: os.Getuid(), DirOwner: true})
	if err != nil {
		return
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return
	}
	next, changed, err := jsonc.AddIfAbsent(old, "statusLine", layout.StatusLine)
	if err != nil || !changed {
		return
	}
	atomicfile.Write(path, next, fi.Mode().Perm())
}
