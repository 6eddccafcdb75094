package installer

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCopyTree: the tree is copied with its modes, links and files; a
// FIFO is left out without holding the copy.
func TestCopyTree(t *testing.T) {
	src, share := filepath.Join(t.TempDir(), ".claude"), t.TempDir()
	dst := filepath.Join(share, ".claude")
	must(t, os.MkdirAll(filepath.Join(src, "projects", "p"), 0o750))
	must(t, os.WriteFile(filepath.Join(src, "settings.json"), []byte("{}"), 0o640))
	must(t, os.WriteFile(filepath.Join(src, "projects", "p", "log"), []byte("a log"), 0o600))
	must(t, os.Symlink("/elsewhere", filepath.Join(src, "link")))
	must(t, syscall.Mkfifo(filepath.Join(src, "fifo"), 0o600))
	must(t, copyTree(dst, src))
	if b, err := os.ReadFile(filepath.Join(dst, "projects", "p", "log")); err != nil || string(b) != "a log" {
		t.Errorf("the log: %q, %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(dst, "link")); err != nil || l != "/elsewhere" {
		t.Errorf("the link: %q, %v", l, err)
	}
	for name, want := range map[string]os.FileMode{"settings.json": 0o640, "projects": 0o750 | os.ModeDir} {
		if fi, err := os.Lstat(filepath.Join(dst, name)); err != nil || fi.Mode() != want {
			t.Errorf("%s: %v, %v; want %v", name, fi.Mode(), err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dst, "fifo")); err == nil {
		t.Error("the FIFO was copied")
	}
}

// TestCopyTreeFollowsNoLink: a link planted in the share where the copy
// writes, or put in place of a directory, is not written through; the
// copy fails and what the link names is unchanged. (The installer runs as
// root; the share and the home are the user's.)
func TestCopyTreeFollowsNoLink(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	must(t, os.WriteFile(victim, []byte("untouched"), 0o600))
	victimDir := t.TempDir()
	for name, plant := range map[string]func(dst string){
		"a file's name": func(dst string) {
			must(t, os.Mkdir(dst, 0o700))
			must(t, os.Symlink(victim, filepath.Join(dst, "settings.json")))
		},
		"a directory's name": func(dst string) {
			must(t, os.Mkdir(dst, 0o700))
			must(t, os.Symlink(victimDir, filepath.Join(dst, "projects")))
		},
		"the share's file": func(dst string) {
			must(t, os.Symlink(victim, dst))
		},
	} {
		t.Run(name, func(t *testing.T) {
			src, share := filepath.Join(t.TempDir(), ".claude"), t.TempDir()
			must(t, os.MkdirAll(filepath.Join(src, "projects"), 0o700))
			must(t, os.WriteFile(filepath.Join(src, "settings.json"), []byte("written"), 0o600))
			must(t, os.WriteFile(filepath.Join(src, "projects", "log"), []byte("written"), 0o600))
			dst := filepath.Join(share, ".claude")
			if name == "the share's file" {
				src = filepath.Join(src, "settings.json")
				dst = filepath.Join(share, ".claude.json")
			}
			plant(dst)
			if err := copyTree(dst, src); err == nil {
				t.Error("the copy went on through a link")
			}
			if b, _ := os.ReadFile(victim); string(b) != "untouched" {
				t.Errorf("the link's target was written: %q", b)
			}
			if entries, _ := os.ReadDir(victimDir); len(entries) != 0 {
				t.Errorf("the linked directory got %d entries", len(entries))
			}
		})
	}
}

// TestCopyTreeReadsNoLink: a file of the home swapped for a link after the
// copy looked at it is not read through: the copy fails and holds no byte
// of what the link names.
func TestCopyTreeReadsNoLink(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	must(t, os.WriteFile(secret, []byte("root's secret"), 0o600))
	home, share := t.TempDir(), t.TempDir()
	must(t, os.Symlink(secret, filepath.Join(home, ".claude.json")))
	// What the look saw: a regular file.
	var st unix.Stat_t
	must(t, unix.Stat(secret, &st))
	from, to := openDir(t, home), openDir(t, share)
	if err := copyRegular(to, ".claude.json", from, ".claude.json", st); err == nil {
		t.Error("the copy read through the link")
	}
	if b, err := os.ReadFile(filepath.Join(share, ".claude.json")); err == nil && strings.Contains(string(b), "secret") {
		t.Errorf("the copy holds the link's target: %q", b)
	}
}

func openDir(t *testing.T, dir string) int {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}
