package launcher

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// BenchmarkLaunch times `claude --version` four ways, interleaved in one run
// so that a noisy machine slows all alike: the real binary directly, bare
// bwrap with the launcher's exact open-mode argv and filter, and the
// launcher in each network mode (network = allowlist adds the network
// namespace, net-init and both proxies; the credential proxy runs in both).
// It reports the ratios; the goals are launcher-open/bwrap <= 1.25 and
// launcher-allowlist/bwrap <= 1.5.
//
// It needs the real Claude Code at /usr/libexec/claude-sandbox/claude (what
// `sudo ./install` puts there) and bubblewrap:
//
//	go test -run '^$' -bench Launch -benchtime 20x ./launcher/
func BenchmarkLaunch(b *testing.B) {
	if _, err := os.Stat(sandbox.RealBinary); err != nil {
		b.Skipf("SKIPPING: the real Claude Code is not installed at %s", sandbox.RealBinary)
	}
	bwrap, err := FindBwrap()
	if err != nil {
		b.Skipf("SKIPPING: %v", err)
	}
	dir := b.TempDir()
	launcherBin := buildBenchLauncher(b, dir)
	ws := benchWorkspace(b, dir)
	b.Chdir(ws)
	environ := []string{"TERM=xterm", "LANG=C.UTF-8", "ANTHROPIC_API_KEY=sk-bench"}
	openConf := filepath.Join(dir, "open.conf")
	must(b, os.WriteFile(openConf, []byte("network = open\n"), 0o644))
	allowConf := filepath.Join(dir, "allowlist.conf")
	must(b, os.WriteFile(allowConf, []byte("network = allowlist\n"), 0o644))
	p := Default
	p.Conf = openConf
	pr, err := Prepare(p, []string{"--version"}, environ)
	if err != nil {
		b.Fatal(err)
	}
	if len(pr.Plan.Stubs) != 0 {
		b.Fatalf("the benchmark workspace still needs stubs: %v", pr.Plan.Stubs)
	}
	// What the launcher creates on its first launch, so bare bwrap has its sources.
	must(b, prepareHome(pr.Launch.Home, pr.Plan.CommandFiles))
	argsFile := filepath.Join(dir, "args")
	must(b, os.WriteFile(argsFile, []byte(strings.Join(pr.Plan.Args, "\x00")+"\x00"), 0o600))
	filterFile := filepath.Join(dir, "seccomp")
	must(b, os.WriteFile(filterFile, sandbox.SeccompProgram(), 0o600))

	// Direct gets Claude's arguments as the sandbox passes them (--no-chrome
	// first), so the ratios measure the sandbox and not Claude's argument
	// parsing: `claude --version` alone takes a fast path that any other
	// argument leaves.
	direct := func() *exec.Cmd { return exec.Command(sandbox.RealBinary, pr.Plan.Command[1:]...) }
	bare := func() *exec.Cmd {
		cmd := exec.Command(bwrap, append([]string{"--args", "3", "--"}, pr.Plan.Command...)...)
		cmd.Env = []string{}
		args, _ := os.Open(argsFile)
		filter, _ := os.Open(filterFile)
		status, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		cmd.ExtraFiles = []*os.File{args, filter, status}
		return cmd
	}
	viaLauncher := func(conf string) func() *exec.Cmd {
		return func() *exec.Cmd {
			cmd := exec.Command(launcherBin, "--version")
			cmd.Env = append([]string{"BENCH_CONF=" + conf}, environ...)
			return cmd
		}
	}
	ways := []struct {
		name string
		cmd  func() *exec.Cmd
	}{{"direct", direct}, {"bwrap", bare}, {"launcher-open", viaLauncher(openConf)}, {"launcher-allowlist", viaLauncher(allowConf)}}
	totals := make([]time.Duration, len(ways))
	for _, w := range ways { // warm the page cache once, outside the timing
		if out, err := w.cmd().CombinedOutput(); err != nil || !strings.Contains(string(out), "Claude Code") {
			b.Fatalf("%s: %v\n%s", w.name, err, out)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, w := range ways {
			cmd := w.cmd()
			start := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%s: %v", w.name, err)
			}
			totals[j] += time.Since(start)
			for _, f := range cmd.ExtraFiles {
				f.Close()
			}
		}
	}
	b.StopTimer()
	for j, w := range ways {
		b.ReportMetric(float64(totals[j].Microseconds())/1000/float64(b.N), w.name+"-ms/op")
	}
	b.ReportMetric(float64(totals[1])/float64(totals[0]), "bwrap/direct")
	b.ReportMetric(float64(totals[2])/float64(totals[1]), "launcher-open/bwrap")
	b.ReportMetric(float64(totals[3])/float64(totals[1]), "launcher-allowlist/bwrap")
}

// BenchmarkSupervisorMemory measures the supervising launcher's peak
// resident memory while a session streams 10 MB through the credential
// proxy in allowlist mode (goal: <= 20 MiB). The "Claude" inside is a
// script that fetches the stream with curl.
//
//	go test -run '^$' -bench SupervisorMemory -benchtime 3x ./launcher/
func BenchmarkSupervisorMemory(b *testing.B) {
	if _, err := FindBwrap(); err != nil {
		b.Skipf("SKIPPING: %v", err)
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("SKIPPING: curl is not installed")
	}
	dir := b.TempDir()
	launcherBin := buildBenchLauncher(b, dir)
	ws := benchWorkspace(b, dir)
	b.Chdir(ws)
	// The real binary's place is taken by a script that, like Claude,
	// talks to ANTHROPIC_BASE_URL with its session token.
	real := filepath.Join(dir, "real-claude")
	must(b, os.WriteFile(real, []byte("#!/bin/sh\nexec "+curl+" -sS -o /dev/null -H \"Authorization: Bearer $ANTHROPIC_AUTH_TOKEN\" \"$ANTHROPIC_BASE_URL/v1/messages\"\n"), 0o755))
	conf := filepath.Join(dir, "allowlist.conf")
	must(b, os.WriteFile(conf, []byte("network = allowlist\n"), 0o644))
	chunk := make([]byte, 64<<10)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for sent := 0; sent < 10<<20; sent += len(chunk) {
			w.Write(chunk)
			w.(http.Flusher).Flush()
		}
	}))
	defer upstream.Close()
	var peak int
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(launcherBin)
		cmd.Env = []string{"BENCH_CONF=" + conf, "BENCH_REAL=" + real, "ANTHROPIC_API_KEY=sk-bench", "ANTHROPIC_BASE_URL=" + upstream.URL}
		cmd.Stderr = os.Stderr
		must(b, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		hwm := 0
	poll:
		for {
			select {
			case err := <-done:
				if err != nil {
					b.Fatalf("the session failed: %v", err)
				}
				break poll
			case <-time.After(5 * time.Millisecond):
				if kb := statusKB(cmd.Process.Pid, "VmHWM:"); kb > hwm {
					hwm = kb
				}
			}
		}
		peak = max(peak, hwm)
	}
	b.ReportMetric(float64(peak)/1024, "peak-rss-MiB")
}

// statusKB reads a "Name:   N kB" line of /proc/PID/status; 0 if gone.
func statusKB(pid int, name string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb
		}
	}
	return 0
}

// buildBenchLauncher builds the launcher whose conf and real binary the
// benchmark chooses (testdata/benchlauncher), named claude.
func buildBenchLauncher(b *testing.B, dir string) string {
	bin := filepath.Join(dir, "bin", "claude")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/benchlauncher").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// benchWorkspace is a workspace where every protected path exists, so every
// launch has the same argv and leaves nothing to clean up.
func benchWorkspace(b *testing.B, dir string) string {
	ws := filepath.Join(dir, "proj")
	for _, d := range []string{".git/hooks", ".git/modules", ".git/worktrees", ".devcontainer", ".vscode", ".idea", ".claude"} {
		must(b, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	for _, f := range []string{".git/config", ".git/commondir", ".devcontainer.json", ".envrc"} {
		must(b, os.WriteFile(filepath.Join(ws, f), nil, 0o644))
	}
	for _, f := range []string{".claude/settings.json", ".claude/settings.local.json", ".mcp.json"} {
		must(b, os.WriteFile(filepath.Join(ws, f), []byte("{}\n"), 0o644))
	}
	return ws
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
