package launcher

import (
	"errors"
	"fmt"
	"io"

	"github.com/claude-sandbox/claude-sandbox/internal/termtext"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// PrintRefusal writes why the launch is refused, one line per refusal, each
// naming the program. A refusal names paths in the workspace and quotes
// files a session may have written, so it is escaped (termtext): a control
// character in a name reaches the terminal as text, a newline cannot forge
// another line.
func PrintRefusal(w io.Writer, err error) {
	var all sandbox.Refusals
	if !errors.As(err, &all) {
		all = sandbox.Refusals{err}
	}
	for _, r := range all {
		fmt.Fprintf(w, "claude-sandbox: %s\n", termtext.Escape(r.Error()))
	}
}
