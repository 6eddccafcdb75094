package launcher

import (
	"errors"
	"fmt"
	"io"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// PrintRefusal writes why the launch is refused, one line per refusal, each
// naming the program.
func PrintRefusal(w io.Writer, err error) {
	var all sandbox.Refusals
	if !errors.As(err, &all) {
		all = sandbox.Refusals{err}
	}
	for _, r := range all {
		fmt.Fprintf(w, "claude-sandbox: %v\n", r)
	}
}
