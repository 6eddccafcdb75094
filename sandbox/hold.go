// What the readers hand the protections (protect.go): the paths to hold.

package sandbox

import (
	"path/filepath"
	"strings"
)

// A hold is a path to keep read-only. One that exists is bound read-only
// and the directories on its way pinned; a missing one's first missing
// component is refused to the sandbox by a name rule, and so is the name of
// one that exists (a program outside that replaces it dissolves the
// mount).
type hold struct {
	path string // absolute
	dir  bool   // a directory is expected
	// exact refuses a link anywhere on the way (a path the admin or the
	// policy names); without it a link's name is refused and what it leads
	// to held (a path git configuration names).
	exact bool
	pin   bool   // an existing directory only pinned, not made read-only (a name rule's directory)
	why   string // the name rule's reason
	// store, when set, is a directory of the workspace's git store bound
	// at path instead (ADR 0034): what the sandbox makes there is seen
	// only inside. With copy, it is a file the launcher copies path to
	// before each launch.
	store string
	copy  bool
}

// A protectedPath is a workspace-relative path kept read-only (a trailing
// slash marks a directory), and why.
type protectedPath struct{ path, why string }

// relHolds turns workspace-relative protected paths into holds.
func relHolds(ws string, paths []protectedPath) []hold {
	out := make([]hold, 0, len(paths))
	for _, p := range paths {
		out = append(out, hold{path: filepath.Join(ws, p.path), dir: strings.HasSuffix(p.path, "/"), exact: true, why: p.why})
	}
	return out
}
