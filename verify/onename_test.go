package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneNameBelow: held-files-one-name fails on a file with another name,
// at the held path or below a held directory, and counts the rest; a link
// below the directory is not followed. Red without the link count's check.
func TestOneNameBelow(t *testing.T) {
	dir := t.TempDir()
	hooks := filepath.Join(dir, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hooks/a", "hooks/b", "elsewhere"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "elsewhere-2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(hooks, "c")); err != nil {
		t.Fatal(err)
	}
	if n, err := oneNameBelow(hooks); n != 2 || err != nil {
		t.Errorf("oneNameBelow(hooks) = %d, %v; want 2 files, no error", n, err)
	}
	if n, err := oneNameBelow(filepath.Join(dir, "missing")); n != 0 || err != nil {
		t.Errorf("a missing path: %d, %v", n, err)
	}
	if err := os.Link(filepath.Join(hooks, "b"), filepath.Join(dir, "b-2")); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{hooks, filepath.Join(hooks, "b")} {
		_, err := oneNameBelow(root)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(hooks, "b")+" is held read-only but has 2 names") {
			t.Errorf("oneNameBelow(%s) = %v; want the file with two names named", root, err)
		}
	}
}
