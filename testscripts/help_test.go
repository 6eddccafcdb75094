package testscripts

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/cli"
)

// helpScript writes cli_help.txtar, a golden script made from the command
// registry, so that a new command gets it too: --help, -h and help NAME
// each exit 0 with the same text, which names the command and every flag,
// and the usage lists the command.
func helpScript(t *testing.T) string {
	var b strings.Builder
	b.WriteString("# Made by helpScript from the command registry: every command's --help.\n")
	for _, c := range cli.Commands() {
		fmt.Fprintf(&b, "\n# %s\n", c.Name)
		fmt.Fprintf(&b, "exec claude-sandbox %s --help\n! stderr .\n", c.Name)
		fmt.Fprintf(&b, "stdout '^usage: claude-sandbox %s( |$)'\n", regexp.QuoteMeta(c.Name))
		for _, f := range append(c.Flags, "-h, --help") {
			fmt.Fprintf(&b, "stdout '^  %s( |$)'\n", regexp.QuoteMeta(f))
		}
		fmt.Fprintf(&b, "cp stdout $WORK/%[1]s.help\nexec claude-sandbox %[1]s -h\ncmp stdout $WORK/%[1]s.help\n", c.Name)
		fmt.Fprintf(&b, "exec claude-sandbox help %[1]s\ncmp stdout $WORK/%[1]s.help\n", c.Name)
		fmt.Fprintf(&b, "exec claude-sandbox help\nstdout '^  claude-sandbox %s( |$)'\n", regexp.QuoteMeta(c.Name))
	}
	file := filepath.Join(t.TempDir(), "cli_help.txtar")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
