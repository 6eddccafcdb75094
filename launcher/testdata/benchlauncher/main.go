// Command benchlauncher is the launcher with its paths taken from the test
// harness's CS_* variables (layouttest.FromEnv), so the benchmarks can time
// each network mode and measure the supervising process without touching
// /etc. The product itself has no such override.
package main

import (
	"os"

	"github.com/claude-sandbox/claude-sandbox/cli"
	"github.com/claude-sandbox/claude-sandbox/internal/layout/layouttest"
)

func main() {
	os.Exit(cli.Main(layouttest.FromEnv(), os.Args[0], os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}
