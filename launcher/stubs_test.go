package launcher

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// removeStub must remove only what is still a stub, and never follow a
// symlink planted in a parent directory.
func TestRemoveStub(t *testing.T) {
	root := t.TempDir()
	ws, elsewhere := filepath.Join(root, "ws"), filepath.Join(root, "elsewhere")
	for _, d := range []string{"ws/.git/worktrees", "ws/filled", "elsewhere/victim"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{"ws/.envrc": "", "ws/.git/commondir": ".\n", "ws/notes": "user data", "ws/filled/x": ""} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(elsewhere, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	dir, err := os.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	fd := int(dir.Fd())

	tests := []struct {
		rel     string
		isDir   bool
		content string
		want    error
		gone    bool
	}{
		{".envrc", false, "", nil, true},
		{".git/commondir", false, ".\n", nil, true},
		{".git/worktrees", true, "", nil, true},
		{"notes", false, "", errFilled, false},
		{"filled", true, "", errFilled, false},
		{"missing", true, "", nil, true},
	}
	for _, tt := range tests {
		err := removeStub(fd, tt.rel, tt.isDir, tt.content)
		if !errors.Is(err, tt.want) {
			t.Errorf("removeStub(%s) = %v, want %v", tt.rel, err, tt.want)
		}
		if _, statErr := os.Lstat(filepath.Join(ws, tt.rel)); (statErr == nil) == tt.gone {
			t.Errorf("after removeStub(%s): exists=%v, want %v", tt.rel, statErr == nil, !tt.gone)
		}
	}
	if err := removeStub(fd, "link/victim", true, ""); err == nil {
		t.Errorf("removeStub through a symlinked parent succeeded")
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "victim")); err != nil {
		t.Errorf("a directory outside the workspace was removed through a symlink: %v", err)
	}
}
