package launcher

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// socketsBench is a Python program that serves on a socket of its own and
// connects to it 10,000 times: a unix socket in /tmp, or TCP on loopback.
const socketsBench = `import socket, sys, threading
unix = sys.argv[1] == "unix"
family = socket.AF_UNIX if unix else socket.AF_INET
srv = socket.socket(family)
srv.bind("/tmp/bench.sock" if unix else ("127.0.0.1", 0))
srv.listen(1024)
addr = srv.getsockname()
def serve():
    while True:
        srv.accept()[0].close()
threading.Thread(target=serve, daemon=True).start()
for _ in range(10000):
    c = socket.socket(family)
    c.connect(addr)
    c.close()
`

// BenchmarkSockets times 10,000 connects to a server inside the sandbox,
// over a unix socket and over TCP, inside the launcher's sandbox (where the
// warden carries out every bind and connect, ADR 0024) and inside bare
// bwrap with the same argv and bwrap's filter only, interleaved in one run
// (goal: at most 1.2x each).
//
//	go test -run '^$' -bench Sockets -benchtime 5x ./launcher/
func BenchmarkSockets(b *testing.B) {
	bwrap, err := host.FindBwrap(layout.Installed())
	if err != nil {
		b.Skipf("SKIPPING: %v", err)
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		b.Skipf("SKIPPING: needs /usr/bin/python3")
	}
	dir := b.TempDir()
	launcherBin := buildBenchLauncher(b, dir)
	ws := benchWorkspace(b, dir)
	b.Chdir(ws)
	must(b, os.WriteFile(filepath.Join(ws, "bench.py"), []byte(socketsBench), 0o644))
	for _, kind := range []string{"unix", "tcp"} {
		b.Run(kind, func(b *testing.B) {
			real := filepath.Join(dir, "real-"+kind)
			must(b, os.WriteFile(real, []byte(fmt.Sprintf("#!/bin/sh\nexec /usr/bin/python3 %s/bench.py %s\n", ws, kind)), 0o755))
			bare, viaLauncher, _ := benchSandboxes(b, bwrap, launcherBin, dir, real)
			totals := timeInterleaved(b, bare, viaLauncher)
			b.ReportMetric(float64(totals[0].Microseconds())/1000/float64(b.N), "bwrap-ms/op")
			b.ReportMetric(float64(totals[1].Microseconds())/1000/float64(b.N), "launcher-ms/op")
			b.ReportMetric(float64(totals[1])/float64(totals[0]), "launcher/bwrap")
		})
	}
}

// benchSandboxes returns commands that run real as Claude inside bare bwrap
// with the launcher's argv (network = open) and bwrap's filter only, and
// through the launcher.
func benchSandboxes(b *testing.B, bwrap, launcherBin, dir, real string) (bare, viaLauncher func() *exec.Cmd, private []string) {
	conf, pr := prepareOpen(b, dir, real)
	bare, _, _ = bareBwrap(b, bwrap, dir, pr)
	viaLauncher = func() *exec.Cmd {
		cmd := exec.Command(launcherBin)
		cmd.Env = []string{"CS_CONF=" + conf, "CS_REAL=" + real}
		return cmd
	}
	return bare, viaLauncher, pr.Plan.Private
}
