package launcher

import (
	"os"
	"path/filepath"
	"testing"
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
