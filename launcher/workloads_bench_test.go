package launcher

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// BenchmarkWorkloads times the work a coding agent runs all day, each
// workload three ways interleaved in one run (so a noisy machine slows all
// alike): without a sandbox, in bare bwrap with the launcher's argv
// (network = open, credentials = inside: no proxy runs) and bwrap's filter
// only, and through the launcher. It reports each way's time, the ratio of
// the launcher to bare bwrap (issue 35's goals: redirections 1.5, temp
// files 1.3, a Go build with its cache in the home 1.1, npm ci and pip
// install 1.15, git checkout 1.3, tar x 1.5), the warden's calls, those it
// let go on in the kernel (ADR 0040), its busy time per run and the
// launcher's CPU per call; and it logs the calls of a run by kind, by
// where they landed and by answer. Every run checks its own result (the unpacked tree,
// the installed packages, the checkout, the build): a sandbox that is fast
// because it lost work fails.
//
// The test data is made by the benchmark itself: a tree and its archive,
// npm packages and Python wheels of many files, a repository with two
// branches, a Go module; nothing is downloaded.
//
//	go test -run '^$' -bench Workloads -benchtime 5x ./launcher/
//	go test -run '^$' -bench 'Workloads/tar-x' -benchtime 5x ./launcher/
func BenchmarkWorkloads(b *testing.B) {
	bwrap, err := host.FindBwrap(layout.Installed())
	if err != nil {
		b.Skipf("SKIPPING: %v", err)
	}
	dir := b.TempDir()
	launcherBin := buildBenchLauncher(b, dir)
	floorBin := filepath.Join(dir, "bin", "floorsupervisor")
	if out, err := exec.Command("go", "build", "-o", floorBin, "./testdata/floorsupervisor").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	// The workspace lies outside /tmp, as a dev container's does
	// (/workspaces/NAME): with it beneath, the sandbox's /tmp could not be
	// locked by the kernel (ADR 0040), and every call there would be the
	// warden's to carry out.
	outsideTmp, err := os.MkdirTemp("/var/tmp", "claude-sandbox-bench-")
	must(b, err)
	b.Cleanup(func() { os.RemoveAll(outsideTmp) })
	ws := benchWorkspace(b, outsideTmp)
	b.Chdir(ws)
	data := filepath.Join(ws, "bench-data")
	must(b, os.MkdirAll(data, 0o755))
	rnd := rand.New(rand.NewSource(25))
	scripts := map[string]string{} // made once: b.Run runs its function again for each b.N
	for _, w := range workloads {
		b.Run(w.name, func(b *testing.B) {
			if w.needs != "" {
				if _, err := exec.LookPath(w.needs); err != nil {
					b.Skipf("SKIPPING: %s needs %s", w.name, w.needs)
				}
			}
			script, ok := scripts[w.name]
			if !ok {
				script = w.setup(b, data, rnd)
				scripts[w.name] = script
			}
			real := filepath.Join(dir, "workload-"+w.name)
			must(b, os.WriteFile(real, []byte("#!/bin/sh\nset -e\ncd "+ws+"\n"+script), 0o755))
			bare, viaLauncher, private := benchSandboxes(b, bwrap, launcherBin, dir, real)
			home := filepath.Join(dir, "home-"+w.name)
			must(b, os.MkdirAll(home, 0o755))
			none := func() *exec.Cmd {
				cmd := exec.Command(real)
				cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "TMPDIR=/tmp"}
				return cmd
			}
			counts := filepath.Join(dir, "warden-"+w.name)
			launcher := func() *exec.Cmd {
				cmd := viaLauncher()
				cmd.Env = append(cmd.Env, "CS_BENCH_WARDEN="+counts)
				if prof := os.Getenv("CS_BENCH_CPUPROFILE"); prof != "" {
					cmd.Env = append(cmd.Env, "CS_BENCH_CPUPROFILE="+prof+"."+w.name)
				}
				return cmd
			}
			floorCounts := filepath.Join(dir, "floor-"+w.name)
			floor := func() *exec.Cmd {
				cmd := underFloorSupervisor(bare(), floorBin, private)
				cmd.Env = append(cmd.Env, "CS_BENCH_FLOOR="+floorCounts)
				return cmd
			}
			totals := timeInterleaved(b, none, bare, launcher, floor)
			// The warden's counts of the last run through the launcher.
			w := readWardenCounts(b, counts)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(ms(totals[0]), "none-ms/op")
			b.ReportMetric(ms(totals[1]), "bwrap-ms/op")
			b.ReportMetric(ms(totals[2]), "launcher-ms/op")
			b.ReportMetric(float64(totals[1])/float64(totals[0]), "bwrap/none")
			b.ReportMetric(float64(totals[2])/float64(totals[1]), "launcher/bwrap")
			b.ReportMetric(ms(totals[3]), "floor-ms/op")
			b.ReportMetric(float64(totals[3])/float64(totals[1]), "floor/bwrap")
			b.ReportMetric(float64(totals[2])/float64(totals[3]), "launcher/floor")
			b.ReportMetric(float64(w.calls), "warden-calls/op")
			b.ReportMetric(float64(w.wentOn), "went-on/op")
			b.ReportMetric(float64(w.busy.Microseconds())/1000, "warden-ms/op")
			if w.calls > 0 {
				b.ReportMetric(float64(w.cpu.Microseconds())/float64(w.calls), "launcher-cpu-us/call")
			}
			if calls, cpu := readFloorCounts(b, floorCounts); calls > 0 {
				b.ReportMetric(float64(cpu.Microseconds())/float64(calls), "floor-cpu-us/call")
			}
			b.Logf("%s: the warden's calls in one run, by kind, landing and answer:\n%s", w.name, w.table)
		})
	}
}

// wardenCounts are what benchlauncher wrote of one run.
type wardenCounts struct {
	name          string
	calls, wentOn int64
	busy, cpu     time.Duration
	table         string // "KIND LANDING ANSWER COUNT" lines, sorted
}

func readWardenCounts(b *testing.B, path string) wardenCounts {
	data, err := os.ReadFile(path)
	must(b, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	w := wardenCounts{name: filepath.Base(path)}
	var busy, cpu int64
	if _, err := fmt.Sscanf(lines[0], "%d %d %d", &w.calls, &busy, &cpu); err != nil {
		b.Fatalf("%s: %q: %v", path, lines[0], err)
	}
	w.busy, w.cpu = time.Duration(busy), time.Duration(cpu)
	kinds := lines[1:]
	sort.Strings(kinds)
	for _, k := range kinds {
		f := strings.Fields(k)
		if len(f) == 4 && f[2] == "went-on" {
			n, _ := strconv.ParseInt(f[3], 10, 64)
			w.wentOn += n
		}
	}
	w.table = strings.Join(kinds, "\n")
	return w
}

// readFloorCounts reads what floorsupervisor wrote of its last run.
func readFloorCounts(b *testing.B, path string) (calls int64, cpu time.Duration) {
	data, err := os.ReadFile(path)
	must(b, err)
	var ns int64
	if _, err := fmt.Sscanf(string(data), "%d %d", &calls, &ns); err != nil {
		b.Fatalf("%s: %q: %v", path, data, err)
	}
	return calls, time.Duration(ns)
}

// A workload is a shell script run as Claude in the workspace, after its
// setup made the data it needs in data; it checks its own result and
// fails when the result is not what the work should have made.
type workload struct {
	name  string
	needs string // a program the workload needs outside the shell's own
	setup func(b *testing.B, data string, rnd *rand.Rand) (script string)
}

var workloads = []workload{
	{name: "tar-x", needs: "tar", setup: func(b *testing.B, data string, rnd *rand.Rand) string {
		writeTar(b, filepath.Join(data, "tree.tar"), benchTree(rnd, 10000))
		// tar -d compares every file with the archive: nothing lost.
		return `rm -rf tarx && mkdir tarx && tar xf bench-data/tree.tar -C tarx && tar df bench-data/tree.tar -C tarx
`
	}},
	// No work: what the launch itself costs each way, which the others
	// include.
	{name: "launch-only", setup: func(b *testing.B, data string, rnd *rand.Rand) string {
		return "true\n"
	}},
	{name: "redirections", setup: func(b *testing.B, data string, rnd *rand.Rand) string {
		return `i=0; while [ $i -lt 5000 ]; do : 2>/dev/null; i=$((i+1)); done
`
	}},
	{name: "npm-ci", needs: "npm", setup: func(b *testing.B, data string, rnd *rand.Rand) string {
		app := filepath.Join(data, "app")
		deps := npmPackages(b, data, rnd, 30, 150)
		must(b, os.MkdirAll(app, 0o755))
		must(b, os.WriteFile(filepath.Join(app, "package.json"), fmt.Appendf(nil, `{"name": "app", "version": "1.0.0", "private": true, "dependencies": {%s}}`, deps), 0o644))
		cmd := exec.Command("npm", "install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts")
		cmd.Dir, cmd.Env = app, append(os.Environ(), "HOME="+data)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("npm install: %v\n%s", err, out)
		}
		want := treeDigest(b, app, "node_modules")
		return `cd bench-data/app && rm -rf node_modules && npm ci --offline --no-audit --no-fund --ignore-scripts >/dev/null
[ "$(find node_modules -type f -exec sha256sum {} + | sort -k2 | sha256sum | cut -c1-64)" = ` + want + ` ]
`
	}},
	{name: "pip-install", needs: "/usr/bin/python3", setup: func(b *testing.B, data string, rnd *rand.Rand) string {
		if err := exec.Command("/usr/bin/python3", "-m", "venv", "--help").Run(); err != nil {
			b.Skipf("SKIPPING: /usr/bin/python3 has no venv")
		}
		wheels := filepath.Join(data, "wheels")
		must(b, os.MkdirAll(wheels, 0o755))
		for i := range 20 {
			writeWheel(b, filepath.Join(wheels, fmt.Sprintf("benchpkg%02d-1.0-py3-none-any.whl", i)), fmt.Sprintf("benchpkg%02d", i), rnd, 150)
		}
		return `cd bench-data && rm -rf venv && /usr/bin/python3 -m venv venv && venv/bin/pip install -q --no-index --no-deps --no-cache-dir wheels/*.whl
[ "$(venv/bin/python -c 'import benchpkg07.m1.f21 as m; print(m.N)')" = 21 ]
`
	}},
	{name: "git-checkout", needs: "git", setup: func(b *testing.B, data string, rnd *rand.Rand) string {
		repo := filepath.Join(data, "repo")
		gitBranches(b, repo, rnd, 5000)
		return `cd bench-data/repo && git checkout -q two && git checkout -q one && git status --porcelain | (! grep -q .)
`
	}},
	{name: "go-build", needs: "go", setup: func(b *testing.B, data string, rnd *rand.Rand) string {
		goModule(b, filepath.Join(data, "gomod"), 20)
		goBin, err := exec.LookPath("go")
		must(b, err)
		// A cold build: an empty build cache in the home each run.
		return `cd bench-data/gomod && rm -rf "$HOME/.cache/go-build" && GOCACHE="$HOME/.cache/go-build" GOFLAGS=-mod=mod GOTOOLCHAIN=local ` + goBin + ` build -buildvcs=false -o /tmp/bench-gomod . && /tmp/bench-gomod | grep -qx 190
`
	}},
	{name: "temp-files", needs: "/usr/bin/python3", setup: func(b *testing.B, data string, rnd *rand.Rand) string {
		// What a test suite does: a temporary directory per test, files
		// written, read back and removed, in /tmp and in the workspace.
		return `/usr/bin/python3 - <<'EOF'
import os, tempfile
for where in ("/tmp", "bench-data"):
    for t in range(200):
        with tempfile.TemporaryDirectory(dir=where) as d:
            for i in range(10):
                p = os.path.join(d, "f%d" % i)
                with open(p, "w") as f:
                    f.write(p)
                with open(p) as f:
                    assert f.read() == p
EOF
`
	}},
}

type benchFile struct {
	name string
	mode int64
	data []byte
}

// benchTree is a source tree of n files in nested directories, sizes from
// empty to 64 KiB.
func benchTree(rnd *rand.Rand, n int) []benchFile {
	files := make([]benchFile, 0, n)
	for i := range n {
		size := []int{0, 100, 1000, 4000, 12000, 65536}[rnd.Intn(6)]
		data := make([]byte, size)
		rnd.Read(data)
		mode := []int64{0o644, 0o755, 0o600}[rnd.Intn(3)]
		files = append(files, benchFile{fmt.Sprintf("src/d%02d/e%d/f%d.c", i%50, i%9, i), mode, data})
	}
	return files
}

func writeTar(b *testing.B, path string, files []benchFile) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, f := range files {
		for d := filepath.Dir(f.name); d != "." && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		must(b, tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Unix(1700000000, 0)}))
	}
	for _, f := range files {
		must(b, tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: time.Unix(1700000000, 0)}))
		_, err := tw.Write(f.data)
		must(b, err)
	}
	must(b, tw.Close())
	must(b, os.WriteFile(path, buf.Bytes(), 0o644))
}

// npmPackages writes count packages of files files each as tarballs in
// data/pkgs and returns the dependencies that name them.
func npmPackages(b *testing.B, data string, rnd *rand.Rand, count, files int) string {
	pkgs := filepath.Join(data, "pkgs")
	must(b, os.MkdirAll(pkgs, 0o755))
	var deps []string
	for k := range count {
		name := fmt.Sprintf("benchpkg%02d", k)
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		add := func(path string, data []byte) {
			must(b, tw.WriteHeader(&tar.Header{Name: "package/" + path, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(1700000000, 0)}))
			_, err := tw.Write(data)
			must(b, err)
		}
		add("package.json", fmt.Appendf(nil, `{"name": %q, "version": "1.0.0"}`, name))
		for j := range files - 1 {
			data := make([]byte, []int{0, 60, 900, 5000}[rnd.Intn(4)])
			rnd.Read(data)
			add(fmt.Sprintf("lib/m%d/f%d.js", j%10, j), data)
		}
		must(b, tw.Close())
		must(b, gz.Close())
		must(b, os.WriteFile(filepath.Join(pkgs, name+"-1.0.0.tgz"), buf.Bytes(), 0o644))
		deps = append(deps, fmt.Sprintf("%q: \"file:../pkgs/%s-1.0.0.tgz\"", name, name))
	}
	return strings.Join(deps, ", ")
}

// writeWheel writes a pure-Python wheel of package pkg with files modules
// (pkg/mJ/fI.py, each defining N = I).
func writeWheel(b *testing.B, path, pkg string, rnd *rand.Rand, files int) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record []string
	add := func(name string, data []byte) {
		w, err := zw.Create(name)
		must(b, err)
		_, err = w.Write(data)
		must(b, err)
		sum := sha256.Sum256(data)
		record = append(record, fmt.Sprintf("%s,sha256=%s,%d", name, base64.RawURLEncoding.EncodeToString(sum[:]), len(data)))
	}
	add(pkg+"/__init__.py", nil)
	for j := range 10 {
		add(fmt.Sprintf("%s/m%d/__init__.py", pkg, j), nil)
	}
	for i := range files {
		pad := make([]byte, rnd.Intn(2000))
		for k := range pad {
			pad[k] = 'a' + byte(rnd.Intn(26))
		}
		add(fmt.Sprintf("%s/m%d/f%d.py", pkg, i%10, i), fmt.Appendf(nil, "N = %d\nPAD = %q\n", i, pad))
	}
	info := pkg + "-1.0.dist-info/"
	add(info+"METADATA", fmt.Appendf(nil, "Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n", pkg))
	add(info+"WHEEL", []byte("Wheel-Version: 1.0\nGenerator: claude-sandbox-bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
	w, err := zw.Create(info + "RECORD")
	must(b, err)
	_, err = w.Write([]byte(strings.Join(append(record, info+"RECORD,,"), "\n") + "\n"))
	must(b, err)
	must(b, zw.Close())
	must(b, os.WriteFile(path, buf.Bytes(), 0o644))
}

// gitBranches makes a repository whose branches one and two hold files
// files each, every file different between them.
func gitBranches(b *testing.B, repo string, rnd *rand.Rand, files int) {
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	must(b, os.MkdirAll(repo, 0o755))
	git("init", "-q", "-b", "one")
	for _, branch := range []string{"one", "two"} {
		if branch == "two" {
			git("checkout", "-q", "-b", "two")
		}
		for _, f := range benchTree(rnd, files) {
			p := filepath.Join(repo, f.name)
			must(b, os.MkdirAll(filepath.Dir(p), 0o755))
			must(b, os.WriteFile(p, f.data, 0o644))
		}
		git("add", "-A")
		git("commit", "-q", "-m", branch)
	}
	git("checkout", "-q", "one")
}

// goModule writes a module of n packages, each importing the one before,
// whose main prints the sum of their numbers.
func goModule(b *testing.B, root string, n int) {
	must(b, os.MkdirAll(root, 0o755))
	must(b, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module benchmod\n\ngo 1.22\n"), 0o644))
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("p%d", i))
		must(b, os.MkdirAll(dir, 0o755))
		src := fmt.Sprintf("package p%d\n\n", i)
		if i > 0 {
			src += fmt.Sprintf("import \"benchmod/p%d\"\n\nfunc Sum() int { return %d + p%d.Sum() }\n", i-1, i, i-1)
		} else {
			src += "func Sum() int { return 0 }\n"
		}
		must(b, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644))
	}
	main := fmt.Sprintf("package main\n\nimport (\n\t\"fmt\"\n\n\t\"benchmod/p%d\"\n)\n\nfunc main() { fmt.Println(p%d.Sum()) }\n", n-1, n-1)
	must(b, os.WriteFile(filepath.Join(root, "main.go"), []byte(main), 0o644))
}

// treeDigest is what the workloads' check prints for the files below
// name in dir.
func treeDigest(b *testing.B, dir, name string) string {
	cmd := exec.Command("sh", "-c", `find "$0" -type f -exec sha256sum {} + | sort -k2 | sha256sum | cut -c1-64`, name)
	cmd.Dir = dir
	out, err := cmd.Output()
	must(b, err)
	return strings.TrimSpace(string(out))
}

// underFloorSupervisor runs a bare bwrap's sandbox under the warden's filter
// with floorsupervisor answering it: the floor the launcher's cost is
// measured against (the trap, the plain answer, a descriptor carried in
// from outside, the kernel's lock on the private file systems), with none
// of the warden's own work. The supervisor's binary is bound into the
// sandbox's /tmp, where its child locks files as init does, installs the
// filter and execs the command.
func underFloorSupervisor(bare *exec.Cmd, floorBin string, private []string) *exec.Cmd {
	// bare.Args: bwrap --args 3 -- COMMAND...
	const inside = "/tmp/.floorsupervisor"
	args := []string{"serve", strconv.Itoa(len(bare.ExtraFiles)), "--", bare.Path, "--args", "3", "--ro-bind", floorBin, inside, "--", inside, "child", "@SOCK@", strings.Join(private, ","), "--"}
	cmd := exec.Command(floorBin, append(args, bare.Args[4:]...)...)
	cmd.Env, cmd.ExtraFiles = bare.Env, bare.ExtraFiles
	return cmd
}
