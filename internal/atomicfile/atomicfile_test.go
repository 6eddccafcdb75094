package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entries lists dir, to see that no temporary file is left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	for _, content := range []string{"first\n", "second\n"} {
		if err := Write(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Fatalf("after Write(%q): %q, %v", content, got, err)
		}
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, %v; want 0640 whatever the umask", fi.Mode(), err)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("the directory holds %q, want only settings.json", got)
	}
}

// The rename replaces the entry: neither a hard link to a file elsewhere
// nor a symlink at the path is written through.
func TestWriteReplacesTheEntry(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(elsewhere, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hard, sym := filepath.Join(dir, "hard"), filepath.Join(dir, "sym")
	if err := os.Link(elsewhere, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, sym); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{hard, sym} {
		if err := Write(p, []byte("new\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s is %v, %v after Write; want a regular file", p, fi.Mode(), err)
		}
	}
	if got, _ := os.ReadFile(elsewhere); string(got) != "keep\n" {
		t.Errorf("the file elsewhere now holds %q: written through a link", got)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("source broke") }

// A write that fails leaves the old file and no temporary one.
func TestFailedCopyLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "conf")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Copy(p, io.MultiReader(strings.NewReader("half"), failingReader{}), 0o644)
	if err == nil || !strings.Contains(err.Error(), "source broke") || !strings.Contains(err.Error(), p) {
		t.Errorf("Copy from a failing source: %v, want an error naming %s and the cause", err, p)
	}
	if got, _ := os.ReadFile(p); string(got) != "old\n" {
		t.Errorf("the file holds %q after a failed write", got)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("the directory holds %q, want only conf", got)
	}
}

func TestWriteInAMissingDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing", "conf")
	if err := Write(p, []byte("x"), 0o644); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Write into a missing directory: %v, want ErrNotExist", err)
	}
}
