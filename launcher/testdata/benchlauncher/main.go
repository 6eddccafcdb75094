// Command benchlauncher is the launcher with its conf, real binary and
// version record taken from BENCH_CONF, BENCH_REAL and BENCH_VERSION_RECORD, so the benchmarks can time each network
// mode and measure the supervising process without touching /etc. The
// product itself has no such override.
package main

import (
	"os"

	"github.com/claude-sandbox/claude-sandbox/cli"
	"github.com/claude-sandbox/claude-sandbox/launcher"
)

func main() {
	p := launcher.Default
	if v := os.Getenv("BENCH_CONF"); v != "" {
		p.Conf = v
	}
	if v := os.Getenv("BENCH_REAL"); v != "" {
		p.RealBinary = v
	}
	if v := os.Getenv("BENCH_VERSION_RECORD"); v != "" {
		p.VersionRecord = v
	}
	os.Exit(cli.Main(p, os.Args[0], os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}
