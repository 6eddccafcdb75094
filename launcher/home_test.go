package launcher

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// What the launch creates in the home is checked before anything changes
// (workspace_not_writable_live checks a home the user may not write).
func TestCreatable(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		part homePart
		want string
	}{
		{"an existing directory", homePart{path: home, dir: true}, ""},
		{"missing, in a directory", homePart{path: filepath.Join(home, "a/b"), dir: true}, ""},
		{"an existing file", homePart{path: file}, ""},
		{"a directory where a file is", homePart{path: file, dir: true}, "cannot create " + file + ": not a directory"},
		{"below a file", homePart{path: filepath.Join(file, "x"), why: " (seen only by sandboxes)"}, "cannot create " + file + "/x (seen only by sandboxes): not a directory"},
	} {
		err := creatable(tt.part)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// copyFile replaces the copy's entry: a hard link or a symlink a session
// left at its name is replaced, and the file elsewhere keeps its content;
// the copy has its mode whatever the umask, and no temporary file stays.
func TestCopyFileReplacesTheEntry(t *testing.T) {
	src, store, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	from := filepath.Join(src, "config")
	if err := os.WriteFile(from, []byte("[core]\n\tbare = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(elsewhere, "kept")
	if err := os.WriteFile(kept, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hard, sym := filepath.Join(store, "config"), filepath.Join(store, "config.launch")
	if err := os.Link(kept, hard); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(kept, sym); err != nil {
		t.Fatal(err)
	}
	// A umask that takes the owner's write bit: the sandbox must still
	// be able to write its copy.
	old := unix.Umask(0o277)
	defer unix.Umask(old)
	for _, to := range []string{hard, sym} {
		if err := copyFile(from, to); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(to)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != copiedFileMode {
			t.Errorf("%s: %v, %v; want a regular file of mode %v", to, fi.Mode(), err, os.FileMode(copiedFileMode))
		}
		if got, err := os.ReadFile(to); err != nil || string(got) != "[core]\n\tbare = false\n" {
			t.Errorf("%s holds %q, %v; want the copy", to, got, err)
		}
	}
	if got, err := os.ReadFile(kept); err != nil || string(got) != "keep\n" {
		t.Errorf("the linked file elsewhere holds %q, %v; want it untouched", got, err)
	}
	if es, err := os.ReadDir(store); err != nil || len(es) != 2 {
		t.Errorf("the store holds %v, %v; want the two copies only", es, err)
	}
}
