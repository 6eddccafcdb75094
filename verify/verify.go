// Package verify is `claude-sandbox verify`. Run inside the sandbox (from
// Claude's shell, or by Claude through the /verify-sandbox command), it
// checks that the live sandbox is the one the policy describes: each check
// asks the kernel (a refused system call, a read-only mount, a mount id, the
// capability sets) rather than trusting a file or a variable the session
// could have changed. docs/verify.md lists every check.
package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/termtext"
)

// Result is one check's outcome. Detail names paths, variables and counts,
// never a secret's value.
type Result struct {
	ID     string `json:"id"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// maxStatus keeps the failure count below host.ExitRefused, which
// means "not inside the sandbox".
const maxStatus = host.ExitRefused - 1

// Run is `claude-sandbox verify`: it runs every check, prints a table (or
// JSON), and returns the number of failed checks. Outside the sandbox it
// refuses with host.ExitRefused.
func Run(p layout.Layout, asJSON bool, environ []string, stdout, stderr io.Writer) int {
	// First, before verify itself opens anything.
	fds, fdsErr := openDescriptors()
	// Only the marker decides whether to run: a sandbox that has the marker
	// but lost its confinement is exactly what the checks must report.
	if fi, err := os.Lstat(layout.InsideMarker); err != nil || !fi.IsDir() {
		fmt.Fprintf(stderr, "claude-sandbox verify: not inside the sandbox: %s is missing; start Claude with claude, then run /verify-sandbox or claude-sandbox verify from its shell\n", layout.InsideMarker)
		return host.ExitRefused
	}
	results := runAll(gather(p, environ, fds, fdsErr))
	if asJSON {
		writeJSON(stdout, results)
	} else {
		writeTable(stdout, results)
	}
	return exitStatus(results)
}

// exitStatus is the number of failed checks, capped at maxStatus.
func exitStatus(results []Result) int {
	return min(failures(results), maxStatus)
}

func runAll(f *facts) []Result {
	out := make([]Result, 0, len(checks))
	for _, c := range checks {
		detail, err := c.run(f)
		if err != nil {
			out = append(out, Result{ID: c.id, Detail: err.Error()})
		} else {
			out = append(out, Result{ID: c.id, OK: true, Detail: detail})
		}
	}
	return out
}

func failures(results []Result) int {
	n := 0
	for _, r := range results {
		if !r.OK {
			n++
		}
	}
	return n
}

// writeTable prints the results as a table. A detail names paths in the
// workspace, which a session chose, and may span lines (an error that
// lists several), so it is escaped (termtext): it stays on its row, and
// nothing in it reaches the terminal as a command.
func writeTable(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "check\tresult\tdetail")
	for _, r := range results {
		result := "ok"
		if !r.OK {
			result = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, result, termtext.Escape(r.Detail))
	}
	tw.Flush()
	fmt.Fprintf(w, "%d checks, %d failed\n", len(results), failures(results))
}

// writeJSON prints the results as JSON, with what a terminal would act on
// in a detail escaped as JSON spells it (termtext.JSON).
func writeJSON(w io.Writer, results []Result) {
	b, _ := json.MarshalIndent(results, "", "  ") // a slice of plain structs always marshals
	fmt.Fprintf(w, "%s\n", termtext.JSON(b))
}
