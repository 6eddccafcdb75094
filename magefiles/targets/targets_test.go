package targets

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The targets run from the module root, as mage runs them.
func chdirRoot(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
}

func TestInstallRunsTheInstaller(t *testing.T) {
	chdirRoot(t)
	root := t.TempDir()
	fake := filepath.Join(t.TempDir(), "fake-claude")
	if out, err := exec.Command("go", "build", "-o", fake, "./testscripts/testdata/fakeclaude").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := install("--root", root, "--claude-binary", fake); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"usr/libexec/claude-sandbox/claude", "usr/libexec/claude-sandbox/claude-sandbox", "usr/local/bin/claude"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			t.Errorf("after install: %v", err)
		}
	}
}

func TestPromoteWritesTheLock(t *testing.T) {
	target := t.TempDir()
	if err := Promote(target); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(target, ".claude/claude-sandbox.lock.json")); err != nil {
		t.Errorf("after promote: %v", err)
	}
}

func TestPromoteRefusesThisRepository(t *testing.T) {
	chdirRoot(t)
	if err := Promote("."); err == nil {
		t.Error("promote of the product's own repository succeeded")
	}
}
