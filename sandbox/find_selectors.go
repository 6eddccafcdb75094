package sandbox

import (
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

// The files that pick a toolchain's program: the names refused, and each
// the walk found held (selectorFiles, in lists.go, says why).

// selectorOutsideNames are selectorFiles as names the sandbox may not make
// where the outside sees them, in any case (a case-insensitive file
// system finds them in any).
func selectorOutsideNames() []namerule.Outside {
	out := make([]namerule.Outside, 0, len(selectorFiles))
	for _, f := range selectorFiles {
		out = append(out, namerule.Outside{Name: f.name, Why: f.why})
	}
	return out
}

// selectorHolds are the holds for every file of selectorFiles the walk
// found in the roots: read-only, its name refused, the directories on the
// way pinned; a link's name is refused and its target held. A directory of
// such a name is none of these tools' files (a virtual environment named
// .env): it is left alone.
func selectorHolds(found []foundEntry) []hold {
	var out []hold
	for _, e := range found {
		if e.kind != unix.DT_REG && e.kind != unix.DT_LNK {
			continue
		}
		for _, f := range selectorFiles {
			if e.rule == f.name {
				out = append(out, hold{path: e.path, why: f.why})
			}
		}
	}
	return out
}
