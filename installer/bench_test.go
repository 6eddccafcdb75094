package installer

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkReinstall times `claude-sandbox install` when everything is in
// place (the run a postCreate makes on every container start), against
// `claude-sandbox version` in the same run, so the ratio is the installer's
// own work. The goal is under 100 ms a run.
//
//	go test -run '^$' -bench Reinstall -benchtime 50x ./installer/
func BenchmarkReinstall(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "claude-sandbox")
	fake := filepath.Join(dir, "fake-claude")
	for out, pkg := range map[string]string{bin: "../cmd/claude-sandbox", fake: "../testscripts/testdata/fakeclaude"} {
		if msg, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", pkg, err, msg)
		}
	}
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		b.Fatal(err)
	}
	install := []string{"install", "--root", root, "--claude-binary", fake, "--allow-write", "/var/cache/build"}
	if out, err := exec.Command(bin, install...).CombinedOutput(); err != nil {
		b.Fatalf("first install: %v\n%s", err, out)
	}
	var reinstall, version time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		out, err := exec.Command(bin, install...).Output()
		reinstall += time.Since(start)
		if err != nil || string(out) != "claude-sandbox: nothing to change\n" {
			b.Fatalf("reinstall: %v: %s", err, out)
		}
		start = time.Now()
		if err := exec.Command(bin, "version").Run(); err != nil {
			b.Fatal(err)
		}
		version += time.Since(start)
	}
	b.ReportMetric(float64(reinstall.Microseconds())/1000/float64(b.N), "reinstall-ms/op")
	b.ReportMetric(float64(reinstall)/float64(version), "reinstall/version")
}
