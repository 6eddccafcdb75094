package cli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkStatusline times one render of the status line as Claude Code
// runs it (a fresh process, JSON on stdin), interleaved with /bin/true so a
// noisy machine slows both alike. It reports ms per render (the goal is
// under 20 ms) and the ratio to starting /bin/true.
//
//	go test -run '^$' -bench Statusline -benchtime 200x ./cli/
func BenchmarkStatusline(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "claude-sandbox")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/claude-sandbox").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	const input = `{"cwd":"/srv/app","model":{"display_name":"Opus"},"workspace":{"current_dir":"/srv/app","project_dir":"/srv/app"}}`
	run := func(name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Stdin = strings.NewReader(input)
		start := time.Now()
		if out, err := cmd.Output(); err != nil {
			b.Fatalf("%s: %v: %s", name, err, out)
		}
		return time.Since(start)
	}
	var line, base time.Duration
	for b.Loop() {
		line += run(bin, "statusline")
		base += run("/bin/true")
	}
	n := float64(b.N)
	b.ReportMetric(float64(line.Microseconds())/1000/n, "ms/render")
	b.ReportMetric(float64(line)/float64(base), "statusline/true")
}
