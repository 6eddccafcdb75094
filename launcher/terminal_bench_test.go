package launcher

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"golang.org/x/sys/unix"
)

// BenchmarkTerminal measures the relay's cost (ADR 0019): `cat` of a
// 100 MB text file to a terminal, through the launcher (the sandbox writes
// to the launcher's pty, and the launcher copies it to the terminal) and
// through bare bwrap with the same argv, which writes to the terminal
// itself, interleaved in one run. The terminal is a pty of the
// benchmark's, the session's controlling terminal, whose other end the
// benchmark reads as fast as it can: the relay's worst case. With tmux
// installed, the same two run in a tmux window too, a terminal that draws
// what it gets as a person's would. It reports the ratios and each way's
// throughput.
//
//	go test -run '^$' -bench Terminal -benchtime 3x ./launcher/
func BenchmarkTerminal(b *testing.B) {
	bwrap, err := host.FindBwrap(layout.Installed())
	if err != nil {
		b.Skipf("SKIPPING: %v", err)
	}
	const size = 100 << 20
	dir := b.TempDir()
	launcherBin := buildBenchLauncher(b, dir)
	ws := benchWorkspace(b, dir)
	b.Chdir(ws)
	line := []byte(strings.Repeat("0123456789abcdef", 4) + "0123456789abcde\n")
	must(b, os.WriteFile(filepath.Join(ws, "data"), bytes.Repeat(line, size/len(line)), 0o644))
	real := filepath.Join(dir, "real-claude")
	must(b, os.WriteFile(real, []byte("#!/bin/sh\nexec cat data\n"), 0o755))
	conf, pr := prepareOpen(b, dir, real)
	bare, argsFile, filterFile := bareBwrap(b, bwrap, dir, pr)
	viaLauncher := func() *exec.Cmd {
		cmd := exec.Command(launcherBin)
		cmd.Env = []string{"CS_CONF=" + conf, "CS_REAL=" + real, "TERM=xterm"}
		return cmd
	}
	// The same two as shell commands, for tmux.
	bareLine := fmt.Sprintf("env -i %s --args 3 -- %s 3<%s 4<%s 5>/dev/null", bwrap, strings.Join(pr.Plan.Claude, " "), argsFile, filterFile)
	launcherLine := fmt.Sprintf("env -i CS_CONF=%s CS_REAL=%s TERM=xterm %s", conf, real, launcherBin)
	ways := []func() time.Duration{
		func() time.Duration { return onTerminal(b, bare(), size) },
		func() time.Duration { return onTerminal(b, viaLauncher(), size) },
	}
	names := []string{"pty-bwrap", "pty-launcher"}
	if _, err := exec.LookPath("tmux"); err == nil {
		sock := filepath.Join(dir, "tmux.sock")
		// A server that stays up between the runs, which end their sessions.
		if out, err := exec.Command("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "keep", "sleep 86400").CombinedOutput(); err != nil {
			b.Fatalf("tmux: %v\n%s", err, out)
		}
		defer exec.Command("tmux", "-S", sock, "kill-server").Run()
		ways = append(ways,
			func() time.Duration { return inTmux(b, sock, bareLine) },
			func() time.Duration { return inTmux(b, sock, launcherLine) })
		names = append(names, "tmux-bwrap", "tmux-launcher")
	}
	for _, w := range ways { // warm the page cache once, outside the timing
		w()
	}
	totals := make([]time.Duration, len(ways))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, w := range ways {
			totals[j] += w()
		}
	}
	b.StopTimer()
	for j, name := range names {
		b.ReportMetric(float64(size)/(1<<20)/(totals[j].Seconds()/float64(b.N)), name+"-MB/s")
	}
	for j := 0; j < len(ways); j += 2 {
		b.ReportMetric(float64(totals[j+1])/float64(totals[j]), strings.TrimSuffix(names[j], "bwrap")+"launcher/bwrap")
	}
}

// inTmux runs a shell command in a new tmux window of 80x24 and returns how
// long it took, from the window's start until the command ended.
func inTmux(b *testing.B, sock, line string) time.Duration {
	start := time.Now()
	cmd := exec.Command("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24",
		line+"; tmux -S "+sock+" wait-for -S bench-done")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("tmux: %v\n%s", err, out)
	}
	if out, err := exec.Command("tmux", "-S", sock, "wait-for", "bench-done").CombinedOutput(); err != nil {
		b.Fatalf("tmux wait-for: %v\n%s", err, out)
	}
	return time.Since(start)
}

// onTerminal runs cmd in a session of its own whose controlling terminal,
// stdin, stdout and stderr are a new pty, reads everything it writes there
// (at least want bytes) and returns how long that took.
func onTerminal(b *testing.B, cmd *exec.Cmd, want int) time.Duration {
	start := time.Now()
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	must(b, err)
	must(b, unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	must(b, err)
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	must(b, err)
	must(b, unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80}))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	must(b, cmd.Start())
	slave.Close()
	got := make(chan int)
	go func() {
		total, buf := 0, make([]byte, 64<<10)
		for {
			n, err := unix.Read(master, buf)
			total += max(n, 0)
			if err != nil && !errors.Is(err, unix.EINTR) {
				got <- total
				return
			}
		}
	}()
	err = cmd.Wait()
	total := <-got // EIO: every copy of the slave is closed
	unix.Close(master)
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	if err != nil {
		b.Fatalf("%s: %v", cmd.Path, err)
	}
	if total < want {
		b.Fatalf("%s: the terminal got %d bytes, not %d", cmd.Path, total, want)
	}
	return time.Since(start)
}
