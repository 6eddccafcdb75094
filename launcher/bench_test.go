package launcher

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// BenchmarkLaunch times `claude --no-chrome --version` four ways (Claude
// Code's full start, as for any session: a lone --version takes a fast path
// that BenchmarkVersion times), interleaved in one run
// so that a noisy machine slows all alike: the real binary directly, bare
// bwrap with the launcher's exact open-mode argv and filter, and the
// launcher in each network mode (network = allowlist adds the network
// namespace and both proxies; init and the warden run in both, as does the
// credential proxy).
// It reports the ratios; the goals are launcher-open/bwrap <= 1.25 and
// launcher-allowlist/bwrap <= 1.5.
//
// It needs the real Claude Code at /usr/libexec/claude-sandbox/claude (what
// `sudo ./install` puts there) and bubblewrap:
//
//	go test -run '^$' -bench Launch -benchtime 20x ./launcher/
func BenchmarkLaunch(b *testing.B) {
	bwrap := needRealClaude(b)
	dir := b.TempDir()
	launcherBin := buildBenchLauncher(b, dir)
	ws := benchWorkspace(b, dir)
	b.Chdir(ws)
	environ := []string{"TERM=xterm", "LANG=C.UTF-8", "ANTHROPIC_API_KEY=sk-bench"}
	openConf := filepath.Join(dir, "open.conf")
	must(b, os.WriteFile(openConf, []byte("network = open\n"), 0o644))
	allowConf := filepath.Join(dir, "allowlist.conf")
	must(b, os.WriteFile(allowConf, []byte("network = allowlist\n"), 0o644))
	p := layout.Installed()
	p.Conf = openConf
	claudeArgs := []string{"--no-chrome", "--version"}
	pr, err := Prepare(p, claudeArgs, launchenv.Receive(environ))
	if err != nil {
		b.Fatal(err)
	}
	// Bare bwrap runs Claude itself: no init, no warden, no proxies.
	bare, _, _ := bareBwrap(b, bwrap, dir, pr)
	// Direct gets Claude's arguments as the sandbox passes them, so the
	// ratios measure the sandbox and not Claude's argument parsing.
	direct := func() *exec.Cmd { return exec.Command(layout.RealBinary, pr.Plan.Claude[1:]...) }
	viaLauncher := func(conf string) func() *exec.Cmd {
		return func() *exec.Cmd {
			cmd := exec.Command(launcherBin, claudeArgs...)
			cmd.Env = append([]string{"CS_CONF=" + conf}, environ...)
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

// BenchmarkNames times a shell that opens 20000 files with O_CREAT (new ones
// and appends, the calls the warden carries out that programs make most)
// inside the launcher's sandbox and inside bare bwrap with the same argv and
// bwrap's filter only, interleaved in one run. It reports the ratio and the
// warden's cost per call. The shell's redirections need no process each, so
// the calls are most of the time measured. The files are made in the
// sandbox's private /tmp (the warden sees every O_CREAT open alike): on
// ext4, making thousands of files just after deleting thousands scans for
// inodes not recently freed, a cost that swamped the warden's and varied
// from run to run by seconds.
//
//	go test -run '^$' -bench Names -benchtime 10x ./launcher/
func BenchmarkNames(b *testing.B) {
	bwrap, err := host.FindBwrap(layout.Installed())
	if err != nil {
		b.Skipf("SKIPPING: %v", err)
	}
	const files = 10000
	dir := b.TempDir()
	launcherBin := buildBenchLauncher(b, dir)
	ws := benchWorkspace(b, dir)
	b.Chdir(ws)
	real := filepath.Join(dir, "real-claude")
	script := fmt.Sprintf(`#!/bin/sh
mkdir /tmp/bench-work && cd /tmp/bench-work || exit 1
i=0; while [ $i -lt %d ]; do : > f$i; echo x >> f$i; i=$((i+1)); done
`, files)
	must(b, os.WriteFile(real, []byte(script), 0o755))
	bare, viaLauncher, _ := benchSandboxes(b, bwrap, launcherBin, dir, real)
	totals := timeInterleaved(b, bare, viaLauncher)
	calls := 2*files + 1
	b.ReportMetric(float64(totals[0].Microseconds())/1000/float64(b.N), "bwrap-ms/op")
	b.ReportMetric(float64(totals[1].Microseconds())/1000/float64(b.N), "launcher-ms/op")
	b.ReportMetric(float64(totals[1])/float64(totals[0]), "launcher/bwrap")
	b.ReportMetric(float64((totals[1]-totals[0]).Microseconds())/float64(b.N)/float64(calls), "warden-us/call")
}

// BenchmarkSupervisorMemory measures the supervising launcher's peak
// resident memory while a session streams 10 MB through the credential
// proxy in allowlist mode (goal: <= 20 MiB). The "Claude" inside is a
// script that fetches the stream with curl.
//
//	go test -run '^$' -bench SupervisorMemory -benchtime 3x ./launcher/
func BenchmarkSupervisorMemory(b *testing.B) {
	if _, err := host.FindBwrap(layout.Installed()); err != nil {
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
		cmd.Env = []string{"CS_CONF=" + conf, "CS_REAL=" + real, "ANTHROPIC_API_KEY=sk-bench", "ANTHROPIC_BASE_URL=" + upstream.URL}
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
// BenchmarkVersion times a lone `claude --version`, interleaved in one run:
// the real binary directly (Claude Code's fast path), the launcher
// answering from the installer's version record, and the launcher without
// a record, which starts a sandbox in each network mode and runs Claude
// Code's fast path inside (no --no-chrome). It reports the milliseconds of
// each and the ratios to direct.
//
//	go test -run '^$' -bench Version -benchtime 20x ./launcher/
func BenchmarkVersion(b *testing.B) {
	needRealClaude(b)
	dir := b.TempDir()
	launcherBin := buildBenchLauncher(b, dir)
	b.Chdir(benchWorkspace(b, dir))
	environ := []string{"TERM=xterm", "LANG=C.UTF-8"}
	confs := map[string]string{}
	for _, mode := range []string{"open", "allowlist"} {
		confs[mode] = filepath.Join(dir, mode+".conf")
		must(b, os.WriteFile(confs[mode], []byte("network = "+mode+"\n"), 0o644))
	}
	out, err := exec.Command(layout.RealBinary, "--version").Output()
	must(b, err)
	record := filepath.Join(dir, "claude.version")
	data, err := host.VersionRecordFor(strings.TrimSuffix(strings.TrimSuffix(string(out), "\n"), " (Claude Code)"), layout.RealBinary)
	must(b, err)
	must(b, os.WriteFile(record, data, 0o644))
	if _, ok := host.RecordedVersion(record, layout.RealBinary); !ok {
		b.Fatalf("the record %s does not answer for %s", record, layout.RealBinary)
	}
	viaLauncher := func(conf, record string) func() *exec.Cmd {
		return func() *exec.Cmd {
			cmd := exec.Command(launcherBin, "--version")
			cmd.Env = append([]string{"CS_CONF=" + conf, "CS_VERSION_RECORD=" + record}, environ...)
			return cmd
		}
	}
	none := filepath.Join(dir, "no-record")
	ways := []struct {
		name string
		cmd  func() *exec.Cmd
	}{
		{"direct", func() *exec.Cmd { return exec.Command(layout.RealBinary, "--version") }},
		{"launcher-recorded", viaLauncher(confs["allowlist"], record)},
		{"launcher-open", viaLauncher(confs["open"], none)},
		{"launcher-allowlist", viaLauncher(confs["allowlist"], none)},
	}
	for _, w := range ways { // warm the page cache once; nothing but the version may be printed
		out, err := w.cmd().CombinedOutput()
		if err != nil || !strings.HasSuffix(string(out), " (Claude Code)\n") || strings.Count(string(out), "\n") != 1 {
			b.Fatalf("%s: %v\n%s", w.name, err, out)
		}
	}
	totals := make([]time.Duration, len(ways))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, w := range ways {
			start := time.Now()
			if err := w.cmd().Run(); err != nil {
				b.Fatalf("%s: %v", w.name, err)
			}
			totals[j] += time.Since(start)
		}
	}
	b.StopTimer()
	for j, w := range ways {
		b.ReportMetric(float64(totals[j].Microseconds())/1000/float64(b.N), w.name+"-ms/op")
	}
	b.ReportMetric(float64(totals[1])/float64(totals[0]), "launcher-recorded/direct")
	b.ReportMetric(float64(totals[2])/float64(totals[0]), "launcher-open/direct")
	b.ReportMetric(float64(totals[3])/float64(totals[0]), "launcher-allowlist/direct")
}

func buildBenchLauncher(b *testing.B, dir string) string {
	bin := filepath.Join(dir, "bin", "claude")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/benchlauncher").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// benchWorkspace is a workspace where every protected path exists, as in
// a real project.
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
	// A launch with the running user's passwd home keeps the workspace's
	// own state there (ADR 0027): leave none behind for this throwaway one.
	if u, err := user.Current(); err == nil {
		b.Cleanup(func() { os.RemoveAll(filepath.Dir(sandbox.StateDir(u.HomeDir, ws, ".claude/jobs"))) })
	}
	return ws
}

func must(b testing.TB, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGitDiscovery measures what finding the workspace's git
// repositories (a walk of the whole workspace for .git entries, ADR 0015)
// costs a launch, against a bare launch in the same run: bwrap with the
// launcher's argv starting /bin/true. It plans (Prepare: the conf, the
// facts, the walk, the argv) in a small workspace and in two large ones,
// 300k files in 30k directories and a node_modules of 1500 packages, and
// reports each plan's time, the walk's share (a large plan minus the small
// one) and its ratio to the bare launch. It needs bubblewrap:
//
//	go test -run '^$' -bench GitDiscovery -benchtime 10x ./launcher/
func BenchmarkGitDiscovery(b *testing.B) {
	bwrap, err := host.FindBwrap(layout.Installed())
	if err != nil {
		b.Skipf("SKIPPING: %v", err)
	}
	real, err := exec.LookPath("true")
	if err != nil {
		b.Skip("SKIPPING: no true(1)")
	}
	dir := b.TempDir()
	small := benchWorkspace(b, dir)
	wide := filepath.Join(dir, "wide")
	wideDirs, wideFiles := buildWideTree(b, wide)
	nodeModules := filepath.Join(dir, "node-modules")
	nmDirs, nmFiles := buildNodeModulesTree(b, nodeModules)
	conf := filepath.Join(dir, "open.conf")
	must(b, os.WriteFile(conf, []byte("network = open\ncredentials = inside\n"), 0o644))
	p := layout.Installed()
	p.Conf, p.RealBinary = conf, real
	environ := []string{"TERM=xterm"}
	plan := func(ws string) *Prepared {
		must(b, os.Chdir(ws))
		pr, err := Prepare(p, nil, launchenv.Receive(environ))
		if err != nil {
			b.Fatal(err)
		}
		return pr
	}
	pr := plan(small)
	must(b, prepareHome(pr.Launch.Home, pr.Plan))
	argsFile := filepath.Join(dir, "args")
	must(b, os.WriteFile(argsFile, []byte(strings.Join(pr.Plan.BwrapArgs(), "\x00")+"\x00"), 0o600))
	filterFile := filepath.Join(dir, "seccomp")
	must(b, os.WriteFile(filterFile, sandbox.SeccompProgram(), 0o600))
	bare := func() {
		cmd := exec.Command(bwrap, append([]string{"--args", "3", "--"}, pr.Plan.Command...)...)
		cmd.Env = []string{}
		args, _ := os.Open(argsFile)
		filter, _ := os.Open(filterFile)
		status, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		cmd.ExtraFiles = []*os.File{args, filter, status}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("bare launch: %v\n%s", err, out)
		}
		for _, f := range cmd.ExtraFiles {
			f.Close()
		}
	}
	ways := []struct {
		name string
		run  func()
	}{
		{"bare-launch", bare},
		{"plan-small", func() { plan(small) }},
		{"plan-30k-dirs", func() { plan(wide) }},
		{"plan-node-modules", func() { plan(nodeModules) }},
	}
	for _, w := range ways { // warm the page cache and the dentry cache
		w.run()
	}
	totals := make([]time.Duration, len(ways))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, w := range ways {
			start := time.Now()
			w.run()
			totals[j] += time.Since(start)
		}
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	for j, w := range ways {
		b.ReportMetric(ms(totals[j]), w.name+"-ms/op")
	}
	b.ReportMetric(ms(totals[2]-totals[1]), "walk-30k-dirs-ms/op")
	b.ReportMetric(ms(totals[3]-totals[1]), "walk-node-modules-ms/op")
	b.ReportMetric(float64(totals[2]-totals[1])/float64(totals[0]), "walk-30k-dirs/bare-launch")
	b.ReportMetric(float64(totals[3]-totals[1])/float64(totals[0]), "walk-node-modules/bare-launch")
	b.ReportMetric(float64(totals[1])/float64(totals[0]), "plan-small/bare-launch")
	b.Logf("30k-dirs tree: %d directories, %d files; node-modules tree: %d directories, %d files", wideDirs, wideFiles, nmDirs, nmFiles)
}

// buildWideTree makes a repository of 30 directories of 1000 directories
// of 10 files: 300k files in 30k directories, with a nested repository.
func buildWideTree(b *testing.B, root string) (dirs, files int) {
	for i := range 30 {
		for j := range 1000 {
			d := filepath.Join(root, fmt.Sprintf("pkg%02d", i), fmt.Sprintf("mod%04d", j))
			must(b, os.MkdirAll(d, 0o755))
			dirs++
			for k := range 10 {
				must(b, os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", k)), nil, 0o644))
				files++
			}
		}
	}
	for _, g := range []string{".git", "pkg07/mod0042/.git"} {
		must(b, os.MkdirAll(filepath.Join(root, g, "hooks"), 0o755))
		must(b, os.WriteFile(filepath.Join(root, g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
		must(b, os.WriteFile(filepath.Join(root, g, "config"), []byte("[core]\n\tbare = false\n"), 0o644))
	}
	return dirs, files
}

// buildNodeModulesTree makes a repository whose node_modules is as npm
// leaves it: 1500 packages, each with lib/, dist/ and test/ directories
// of small files, a third of them with a nested node_modules of 5 more.
func buildNodeModulesTree(b *testing.B, root string) (dirs, files int) {
	var pkg func(dir string, depth int)
	pkg = func(dir string, depth int) {
		for _, sub := range []string{"lib/util", "dist/esm", "dist/cjs", "test"} {
			must(b, os.MkdirAll(filepath.Join(dir, sub), 0o755))
			dirs++
			for k := range 8 {
				must(b, os.WriteFile(filepath.Join(dir, sub, fmt.Sprintf("m%d.js", k)), nil, 0o644))
				files++
			}
		}
		must(b, os.WriteFile(filepath.Join(dir, "package.json"), nil, 0o644))
		files++
		for n := range depth * 5 {
			pkg(filepath.Join(dir, "node_modules", fmt.Sprintf("dep%d", n)), depth-1)
		}
	}
	for i := range 1500 {
		pkg(filepath.Join(root, "node_modules", fmt.Sprintf("p%04d", i)), map[bool]int{true: 1, false: 0}[i%3 == 0])
	}
	must(b, os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755))
	must(b, os.WriteFile(filepath.Join(root, ".git/config"), []byte("[core]\n"), 0o644))
	return dirs, files
}

// needRealClaude skips a benchmark that needs the real Claude Code where
// `sudo ./install` puts it, and bubblewrap; it returns bwrap's path.
func needRealClaude(b *testing.B) string {
	if _, err := os.Stat(layout.RealBinary); err != nil {
		b.Skipf("SKIPPING: the real Claude Code is not installed at %s", layout.RealBinary)
	}
	bwrap, err := host.FindBwrap(layout.Installed())
	if err != nil {
		b.Skipf("SKIPPING: %v", err)
	}
	return bwrap
}

// prepareOpen prepares a launch of real with network = open and
// credentials = inside: no proxy of the launcher's runs, so a benchmark
// compares the sandbox alone. It returns the conf's path.
func prepareOpen(b *testing.B, dir, real string) (string, *Prepared) {
	conf := filepath.Join(dir, "open.conf")
	must(b, os.WriteFile(conf, []byte("network = open\ncredentials = inside\n"), 0o644))
	p := layout.Installed()
	p.Conf, p.RealBinary = conf, real
	pr, err := Prepare(p, nil, launchenv.Given{})
	if err != nil {
		b.Fatal(err)
	}
	return conf, pr
}

// bareBwrap is bare bwrap with the launcher's argv and bwrap's filter only,
// running Claude's command itself: no init, no warden, no proxies. It makes
// what the launcher makes in the home on a first launch, so bare bwrap has
// its sources, and returns the argv and filter files it reads too.
func bareBwrap(b *testing.B, bwrap, dir string, pr *Prepared) (bare func() *exec.Cmd, argsFile, filterFile string) {
	must(b, prepareHome(pr.Launch.Home, pr.Plan))
	args, err := os.CreateTemp(dir, "args-")
	must(b, err)
	_, err = args.WriteString(strings.Join(pr.Plan.BwrapArgs(), "\x00") + "\x00")
	must(b, err)
	must(b, args.Close())
	filterFile = filepath.Join(dir, "seccomp")
	must(b, os.WriteFile(filterFile, sandbox.SeccompProgram(), 0o600))
	// The files the plan makes (the home's git configuration) are read
	// from their descriptors, as the launcher passes them.
	contents := map[int]string{}
	for fd, data := range pr.Plan.FileContents() {
		name := filepath.Join(dir, fmt.Sprintf("file-%d", fd))
		must(b, os.WriteFile(name, data, 0o600))
		contents[fd] = name
	}
	bare = func() *exec.Cmd {
		cmd := exec.Command(bwrap, append([]string{"--args", "3", "--"}, pr.Plan.Claude...)...)
		cmd.Env = []string{}
		args, _ := os.Open(args.Name())
		filter, _ := os.Open(filterFile)
		status, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		cmd.ExtraFiles = []*os.File{args, filter, status}
		for fd := sandbox.StatusFD + 1; fd < sandbox.InheritedFDs+3; fd++ {
			f, _ := os.Open(os.DevNull) // what bare bwrap does not read
			if name, ok := contents[fd]; ok {
				f, _ = os.Open(name)
			}
			cmd.ExtraFiles = append(cmd.ExtraFiles, f)
		}
		return cmd
	}
	return bare, args.Name(), filterFile
}

// timeInterleaved runs each way once untimed, then b.N times interleaved
// with the others, so a noisy machine slows all alike; it returns each
// way's total time.
func timeInterleaved(b *testing.B, ways ...func() *exec.Cmd) []time.Duration {
	for _, w := range ways {
		if out, err := w().CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
	totals := make([]time.Duration, len(ways))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, w := range ways {
			cmd := w()
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
			totals[j] += time.Since(start)
			for _, f := range cmd.ExtraFiles {
				f.Close()
			}
		}
	}
	b.StopTimer()
	return totals
}
