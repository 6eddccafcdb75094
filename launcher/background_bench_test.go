package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// BenchmarkBackground times `claude --bg TASK`, which returns once the
// background service has taken the session (ADR 0026), two ways
// interleaved in one run: the real binary directly, and the launcher
// (network = open), each with a home of its own. The first call of each
// starts its service (the launcher's: a detached service sandbox, then the
// client's sandbox) and is reported apart ("cold"); the others find it
// running. It reports the ratios, then stops every session so that both
// services exit. It needs the real Claude Code and bubblewrap:
//
//	go test -run '^$' -bench Background -benchtime 5x ./launcher/
func BenchmarkBackground(b *testing.B) {
	needRealClaude(b)
	dir := b.TempDir()
	launcherBin := buildBenchLauncher(b, dir)
	ws := benchWorkspace(b, dir)
	b.Chdir(ws)
	api := newSessionAPI(b)
	conf := filepath.Join(dir, "open.conf")
	must(b, os.WriteFile(conf, []byte("network = open\n"), 0o644))
	homes := map[string]string{"direct": filepath.Join(dir, "direct-home"), "launcher": filepath.Join(dir, "launcher-home")}
	for _, h := range homes {
		must(b, os.MkdirAll(filepath.Join(h, ".claude"), 0o700))
		must(b, os.WriteFile(filepath.Join(h, ".claude.json"), []byte(fmt.Sprintf(`{"hasCompletedOnboarding": true, "projects": {%q: {"hasTrustDialogAccepted": true}}}`, ws)), 0o600))
	}
	passwd := filepath.Join(dir, "passwd")
	must(b, os.WriteFile(passwd, []byte(fmt.Sprintf("bench:x:%d:%d::%s:/bin/sh\n", os.Getuid(), os.Getgid(), homes["launcher"])), 0o644))
	environ := []string{"TERM=xterm", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin",
		"ANTHROPIC_API_KEY=sk-bench", "ANTHROPIC_BASE_URL=" + api.url + "/bg",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
	direct := func(args ...string) *exec.Cmd {
		cmd := exec.Command(layout.RealBinary, args...)
		cmd.Env = append(environ, "HOME="+homes["direct"])
		return cmd
	}
	viaLauncher := func(args ...string) *exec.Cmd {
		cmd := exec.Command(launcherBin, args...)
		cmd.Env = append(environ, "HOME="+homes["launcher"], "CS_CONF="+conf, "CS_PASSWD="+passwd)
		return cmd
	}
	ways := []struct {
		name string
		cmd  func(args ...string) *exec.Cmd
	}{{"direct", direct}, {"launcher", viaLauncher}}
	backgrounded := regexp.MustCompile(`backgrounded · ([0-9a-f]+)`)
	ids := make([][]string, len(ways))
	bg := func(j int) time.Duration {
		cmd := ways[j].cmd("--bg", "say done")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took := time.Since(start)
		m := backgrounded.FindSubmatch(out)
		if err != nil || m == nil {
			b.Fatalf("%s --bg: %v\n%s", ways[j].name, err, out)
		}
		ids[j] = append(ids[j], string(m[1]))
		return took
	}
	b.Cleanup(func() {
		for j, w := range ways {
			for _, id := range ids[j] {
				_ = w.cmd("stop", id).Run()
			}
		}
		// Both services exit five seconds after their last session.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if exec.Command("pgrep", "-f", dir).Run() != nil {
				return
			}
		}
		b.Errorf("a background service of the benchmark still runs")
	})
	cold := make([]time.Duration, len(ways))
	for j := range ways {
		cold[j] = bg(j)
	}
	totals := make([]time.Duration, len(ways))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range ways {
			totals[j] += bg(j)
		}
	}
	b.StopTimer()
	for j, w := range ways {
		b.ReportMetric(float64(cold[j].Microseconds())/1000, w.name+"-cold-ms")
		b.ReportMetric(float64(totals[j].Microseconds())/1000/float64(b.N), w.name+"-ms/op")
	}
	b.ReportMetric(float64(cold[1])/float64(cold[0]), "launcher/direct-cold")
	b.ReportMetric(float64(totals[1])/float64(totals[0]), "launcher/direct")
}
