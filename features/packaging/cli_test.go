package packaging

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// testCLI is the pinned devcontainer CLI, installed on first use. Without
// it (no npm, no registry) the test is skipped loudly, and fails under
// CI=true. The CLI's log is shown when the test fails.
func testCLI(t *testing.T) CLI {
	t.Helper()
	path, err := DevcontainerCLI(TestCLICache)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the devcontainer CLI tests must run under CI=true, but: %v", err)
		}
		fmt.Fprintf(os.Stderr, "\n!!! SKIPPING DEVCONTAINER CLI TESTS: %v\n\n", err)
		t.Skip(err)
	}
	return CLI{Path: path, Log: failureLog(t, "devcontainer CLI")}
}

// failureLog is a log shown only if the test fails; a registry's handlers
// write it concurrently.
func failureLog(t *testing.T, what string) io.Writer {
	log := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s log:\n%s", what, log.String())
		}
	})
	return log
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Once installed, the CLI is found in the cache without npm, and is the
// pinned version.
func TestDevcontainerCLIIsReused(t *testing.T) {
	cli := testCLI(t)
	t.Run("without npm", func(t *testing.T) {
		t.Setenv("PATH", "")
		again, err := DevcontainerCLI(TestCLICache)
		if err != nil {
			t.Fatalf("second lookup: %v", err)
		}
		if again != cli.Path {
			t.Errorf("second lookup gave %s, want %s", again, cli.Path)
		}
	})
	out, err := cli.run("", "--version")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(bytes.TrimSpace(out)); got != CLIVersion {
		t.Errorf("devcontainer --version = %q, want %s", got, CLIVersion)
	}
}

// The CLI would reach a loopback address over https; naming one is refused
// with a hint, and localhost, which it reaches over plain HTTP, is not.
func TestCheckRegistry(t *testing.T) {
	for registry, refused := range map[string]bool{
		"127.0.0.1:5000": true,
		"127.0.0.1":      true,
		"[::1]:5000":     true,
		"localhost:5000": false,
		"ghcr.io":        false,
		"10.0.0.1:5000":  false,
	} {
		if err := checkRegistry(registry); (err != nil) != refused {
			t.Errorf("checkRegistry(%q) = %v, want refused %v", registry, err, refused)
		}
	}
}

// Every run of the CLI has a temporary directory of its own, made empty
// and removed afterwards: the CLI stages packages in one named by the
// millisecond, which two runs started together would share.
func TestRunsHaveTheirOwnTemporaryDirectory(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "devcontainer")
	script := "#!/bin/sh\nprintf '%s\\n' \"$TMPDIR\"\nls -A \"$TMPDIR\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cli := CLI{Path: fake}
	seen := map[string]bool{}
	for range 2 {
		out, err := cli.run("", "features", "package")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		tmp := lines[0]
		switch {
		case len(lines) != 1:
			t.Errorf("the run's TMPDIR %s held %q, want it empty", tmp, lines[1:])
		case tmp == "" || tmp == os.TempDir():
			t.Errorf("the run's TMPDIR is %q, the test's own (%s)", tmp, os.TempDir())
		case seen[tmp]:
			t.Errorf("two runs shared TMPDIR %s", tmp)
		}
		seen[tmp] = true
		if _, err := os.Stat(tmp); !os.IsNotExist(err) {
			t.Errorf("the run's TMPDIR %s is left after it: %v", tmp, err)
		}
	}
}

// A failed run's error names the CLI's error, not whatever line its log
// happens to end with.
func TestFailureLine(t *testing.T) {
	for log, want := range map[string]string{
		"Error: Target folder '/x' does not exist\n    at OQ (cli.js:598:4767)\n[2026-12-06T08:57:52.716Z] Packaging feature collection...\n": "Error: Target folder '/x' does not exist",
		"[2026-12-06T08:57:52.716Z] (!) ERR: Output directory '/o' already exists.\n[2026-12-06T08:57:52.716Z] done\n":                        "[2026-12-06T08:57:52.716Z] (!) ERR: Output directory '/o' already exists.",
		"[Error: ENOENT: no such file or directory, lstat '/tmp/t'] {\n  errno: -2,\n  path: [\n    '/tmp/t'\n  ]\n}\n":                       "[Error: ENOENT: no such file or directory, lstat '/tmp/t'] {",
		"line one\nthe last line\n": "the last line",
	} {
		if got := failureLine([]byte(log)); got != want {
			t.Errorf("failureLine(%q) = %q, want %q", log, got, want)
		}
	}
}
