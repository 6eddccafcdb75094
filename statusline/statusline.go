// Package statusline renders the line Claude Code shows under its prompt:
// whether the session is sandboxed, its workspace, and the network mode. It
// runs on every refresh, so it reads one small JSON document and decides
// with a few system calls.
package statusline

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/termtext"
)

// input is the part of Claude Code's status line input used here.
type input struct {
	Cwd       string `json:"cwd"`
	Workspace struct {
		ProjectDir string `json:"project_dir"`
		CurrentDir string `json:"current_dir"`
	} `json:"workspace"`
}

// Render writes the status line. inside is host.Inside(), network the
// conf's network mode, home the user's home (shown as ~).
func Render(inside bool, network, home string, stdin io.Reader, stdout io.Writer) {
	var in input
	json.NewDecoder(io.LimitReader(stdin, 1<<20)).Decode(&in)
	dir := in.Workspace.ProjectDir
	for _, d := range []string{in.Workspace.CurrentDir, in.Cwd} {
		if dir == "" {
			dir = d
		}
	}
	if home != "" && home != "/" && (dir == home || strings.HasPrefix(dir, home+"/")) {
		dir = "~" + dir[len(home):]
	}
	parts := []string{"⚠ NOT SANDBOXED (start Claude with `claude`)"}
	if inside {
		parts[0] = "🔒 sandboxed"
	}
	if dir != "" {
		// A directory a session may have named: Claude Code shows the line
		// as printed, escape sequences and all, so it is escaped (termtext).
		parts = append(parts, termtext.Escape(dir))
	}
	if inside {
		parts = append(parts, "network "+network)
	}
	fmt.Fprintln(stdout, strings.Join(parts, " · "))
}
