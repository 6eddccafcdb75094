package installer

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// newRoot makes a target system with an unsandboxed Claude Code on PATH in
// the three usual places, and returns its root and a fake real binary.
func newRoot(t *testing.T) (root, fake string) {
	t.Helper()
	root = t.TempDir()
	fake = filepath.Join(t.TempDir(), "fake-claude")
	if out, err := exec.Command("go", "build", "-o", fake, "../testscripts/testdata/fakeclaude").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	files := map[string]string{
		"etc/passwd": "root:x:0:0::/root:/bin/sh\ndev:x:1000:1000::/home/dev:/bin/sh\n",
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	for _, p := range []string{"/usr/bin/claude", "/usr/local/bin/claude", "/home/dev/.local/bin/claude"} {
		must(t, os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755))
		must(t, copyAtomic(filepath.Join(root, p), fake, 0o755))
	}
	return root, fake
}

// self stands in for the claude-sandbox binary being installed.
func self(t *testing.T) string {
	p, err := os.Executable()
	must(t, err)
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkNoBrokenClaude is the crash-safety invariant: every `claude` on PATH
// is either the original one or a link to a launcher that is fully in
// place (launcher and real binary both present).
func checkNoBrokenClaude(t *testing.T, root, fake, when string) {
	t.Helper()
	for _, p := range []string{"/usr/bin/claude", "/usr/local/bin/claude", "/home/dev/.local/bin/claude"} {
		host := filepath.Join(root, p)
		target, err := os.Readlink(host)
		if err != nil {
			if !sameContent(host, fake) {
				t.Errorf("%s: %s is neither the original nor a link to the launcher", when, p)
			}
			continue
		}
		if target != layout.LauncherBinary {
			t.Errorf("%s: %s links to %s", when, p, target)
		}
		for _, need := range []string{layout.LauncherBinary, layout.RealBinary} {
			if _, err := os.Stat(filepath.Join(root, need)); err != nil {
				t.Errorf("%s: %s links to the launcher but %s is missing", when, p, need)
			}
		}
	}
}

// TestCrashAtEachStep stops an install after each of its steps, as a kill
// would, and checks that no `claude` is left broken or pointing at a half
// install, and that the next run completes it.
func TestCrashAtEachStep(t *testing.T) {
	root, fake := newRoot(t)
	opts := Options{Root: root, Self: self(t), ClaudeBinary: fake, User: "dev"}
	full := &run{opts: opts, out: io.Discard}
	src, err := full.findClaude()
	must(t, err)
	must(t, full.plan(src))
	steps := len(full.changes)
	if steps < 5 {
		t.Fatalf("the plan has only %d steps", steps)
	}
	for stop := 0; stop <= steps; stop++ {
		root, fake := newRoot(t)
		opts := Options{Root: root, Self: self(t), ClaudeBinary: fake, User: "dev"}
		in := &run{opts: opts, out: io.Discard}
		src, err := in.findClaude()
		must(t, err)
		must(t, in.plan(src))
		for _, c := range in.changes[:stop] {
			must(t, c.apply())
		}
		checkNoBrokenClaude(t, root, fake, fmt.Sprintf("after step %d of %d", stop, steps))
		var out strings.Builder
		must(t, Install(opts, nil, &out))
		checkNoBrokenClaude(t, root, fake, "after the next run")
		for _, p := range []string{"/usr/bin/claude", "/usr/local/bin/claude", "/home/dev/.local/bin/claude"} {
			if target, _ := os.Readlink(filepath.Join(root, p)); target != layout.LauncherBinary {
				t.Errorf("after stopping at step %d and running again, %s is not the launcher", stop, p)
			}
		}
		out.Reset()
		must(t, Install(opts, nil, &out))
		if out.String() != "claude-sandbox: nothing to change\n" {
			t.Errorf("after stopping at step %d, a third run still changed: %s", stop, out.String())
		}
	}
}

// TestConcurrentInstalls runs installs at once (a postCreate and a manual
// run): they serialise on the lock, all succeed, and each change is made once.
func TestConcurrentInstalls(t *testing.T) {
	root, fake := newRoot(t)
	opts := Options{Root: root, Self: self(t), ClaudeBinary: fake, User: "dev"}
	var wg sync.WaitGroup
	outs := make([]strings.Builder, 4)
	errs := make([]error, len(outs))
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Install(opts, nil, &outs[i])
		}()
	}
	wg.Wait()
	installs := 0
	for i := range outs {
		must(t, errs[i])
		if strings.Contains(outs[i].String(), "installed the launcher") {
			installs++
		}
	}
	if installs != 1 {
		t.Errorf("the launcher was installed %d times, want once", installs)
	}
	checkNoBrokenClaude(t, root, fake, "after concurrent installs")
}

// The installed /verify-sandbox runs the layout's verify command, which is
// how the installer recognises the file as its own.
func TestVerifySlashCommandRunsVerify(t *testing.T) {
	want, err := verifyCommand()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(want, []byte(layout.VerifyCommand)) {
		t.Errorf("the /verify-sandbox command does not run %q:\n%s", layout.VerifyCommand, want)
	}
}
