package launcher

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// BenchmarkLaunch times `claude --version` three ways, interleaved in one run
// so that a noisy machine slows all three alike: the real binary directly,
// bare bwrap with the launcher's exact argv and filter, and the launcher.
// It reports the ratios; the goal is launcher/bwrap <= 1.25.
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
	launcherBin := filepath.Join(dir, "bin", "claude")
	if out, err := exec.Command("go", "build", "-o", launcherBin, "../cmd/claude-sandbox").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	// A workspace where every protected path exists, so every launch has the
	// same argv and leaves nothing to clean up.
	ws := filepath.Join(dir, "proj")
	for _, d := range []string{".git/hooks", ".git/modules", ".git/worktrees", ".devcontainer", ".vscode", ".idea"} {
		must(b, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	for _, f := range []string{".git/config", ".git/commondir", ".devcontainer.json", ".envrc"} {
		must(b, os.WriteFile(filepath.Join(ws, f), nil, 0o644))
	}
	b.Chdir(ws)
	environ := []string{"TERM=xterm", "LANG=C.UTF-8"}
	pr, err := Prepare(Default, []string{"--version"}, environ)
	if err != nil {
		b.Fatal(err)
	}
	if len(pr.Plan.Stubs) != 0 {
		b.Fatalf("the benchmark workspace still needs stubs: %v", pr.Plan.Stubs)
	}
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
	viaLauncher := func() *exec.Cmd {
		cmd := exec.Command(launcherBin, "--version")
		cmd.Env = environ
		return cmd
	}
	ways := []struct {
		name string
		cmd  func() *exec.Cmd
	}{{"direct", direct}, {"bwrap", bare}, {"launcher", viaLauncher}}
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
		b.ReportMetric(float64(totals[j].Milliseconds())/float64(b.N), w.name+"-ms/op")
	}
	b.ReportMetric(float64(totals[1])/float64(totals[0]), "bwrap/direct")
	b.ReportMetric(float64(totals[2])/float64(totals[1]), "launcher/bwrap")
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
