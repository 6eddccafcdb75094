// Command claude-sandbox is the launcher (when invoked as `claude`) and the
// admin's tool (argv, doctor) of claude-sandbox.
package main

import (
	"os"

	"github.com/claude-sandbox/claude-sandbox/cli"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

func main() {
	os.Exit(cli.Main(layout.Installed(), os.Args[0], os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}
