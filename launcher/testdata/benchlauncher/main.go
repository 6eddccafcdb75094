// Command benchlauncher is the launcher with its paths taken from the test
// harness's CS_* variables (layouttest.FromEnv), so the benchmarks can time
// each network mode and measure the supervising process without touching
// /etc. The product itself has no such override. With CS_BENCH_WARDEN set,
// it writes there, once the session has ended, how many calls the warden
// carried out and for how long in all (nanoseconds): "CALLS BUSY".
package main

import (
	"fmt"
	"os"

	"github.com/claude-sandbox/claude-sandbox/cli"
	"github.com/claude-sandbox/claude-sandbox/internal/layout/layouttest"
	"github.com/claude-sandbox/claude-sandbox/warden"
)

func main() {
	code := cli.Main(layouttest.FromEnv(), os.Args[0], os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	if path := os.Getenv("CS_BENCH_WARDEN"); path != "" {
		calls, busy := warden.Totals()
		if err := os.WriteFile(path, fmt.Appendf(nil, "%d %d\n", calls, busy.Nanoseconds()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "benchlauncher:", err)
			code = 1
		}
	}
	os.Exit(code)
}
