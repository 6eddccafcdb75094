// Command benchlauncher is the launcher with its paths taken from the test
// harness's CS_* variables (layouttest.FromEnv), so the benchmarks can time
// each network mode and measure the supervising process without touching
// /etc. The product itself has no such override. With CS_BENCH_WARDEN set,
// it writes there, once the session has ended, how many calls the warden
// answered, for how long in all and the launcher's CPU time (nanoseconds):
// "CALLS BUSY CPU"; then a line "KIND LANDING ANSWER COUNT" for each kind
// of call (warden.Breakdown). With CS_BENCH_CPUPROFILE set, it writes
// there a CPU profile of the whole launch (go tool pprof).
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/claude-sandbox/claude-sandbox/cli"
	"github.com/claude-sandbox/claude-sandbox/internal/layout/layouttest"
	"github.com/claude-sandbox/claude-sandbox/warden"
	"golang.org/x/sys/unix"
)

func main() {
	if path := os.Getenv("CS_BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil || pprof.StartCPUProfile(f) != nil {
			fmt.Fprintln(os.Stderr, "benchlauncher: cannot profile to", path)
			os.Exit(1)
		}
	}
	code := cli.Main(layouttest.FromEnv(), os.Args[0], os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	if path := os.Getenv("CS_BENCH_WARDEN"); path != "" {
		calls, busy := warden.Totals()
		var ru unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &ru)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		out := fmt.Appendf(nil, "%d %d %d\n", calls, busy.Nanoseconds(), cpu.Nanoseconds())
		for kind, n := range warden.Breakdown() {
			out = fmt.Appendf(out, "%s %d\n", kind, n)
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "benchlauncher:", err)
			code = 1
		}
	}
	pprof.StopCPUProfile()
	os.Exit(code)
}
