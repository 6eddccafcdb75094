package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

func TestFindEntries(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		mk(filepath.Dir(p))
		if err := os.WriteFile(filepath.Join(root, p), []byte("gitdir: x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("ws/.git/objects/aa")
	mk("ws/.git/modules/sub/.git") // inside a git directory: not walked
	mk("ws/vendor/lib/.git/hooks")
	write("ws/sub/.git")
	mk("ws/a/b/c/d/e/f/.git")
	mk("ws/upper/.GIT")
	mk("ws/hgrepo/.hg/store/data/.git") // inside a repository directory: not walked
	mk("ws/jjrepo/.jj/repo")
	mk("ws/jjrepo/.git")
	write("ws/cased/Rust-Toolchain.TOML")
	mk("ws/node_modules/x/node_modules/y")
	write("ws/crates/a/rust-toolchain.toml")
	mk("ws/.env/lib") // a virtual environment named .env: found, and walked
	write("ws/.env/lib/.yarnrc")
	write("ws/node_modules/x/node_modules/y/.git")
	mk("elsewhere/deep/.git")
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, "ws/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere/deep/.git"), filepath.Join(root, "ws/linked/.git")); err != nil {
		mk("ws/linked")
		if err := os.Symlink(filepath.Join(root, "elsewhere/deep/.git"), filepath.Join(root, "ws/linked/.git")); err != nil {
			t.Fatal(err)
		}
	}
	mk("ws/locked/.git")
	if err := os.Chmod(filepath.Join(root, "ws/locked"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(root, "ws/locked"), 0o755)

	got, err := findEntries([]string{filepath.Join(root, "ws")})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range got {
		if strings.HasSuffix(e.path, "/Rust-Toolchain.TOML") && e.rule != "rust-toolchain.toml" {
			t.Errorf("%s is found as %q, not as rust-toolchain.toml", e.path, e.rule)
		}
		lines = append(lines, map[byte]string{unix.DT_DIR: "dir", unix.DT_REG: "file", unix.DT_LNK: "link"}[e.kind]+" "+strings.TrimPrefix(e.path, root+"/"))
	}
	want := []string{
		"dir ws/.env",
		"file ws/.env/lib/.yarnrc",
		"dir ws/.git",
		"dir ws/a/b/c/d/e/f/.git",
		"file ws/cased/Rust-Toolchain.TOML",
		"file ws/crates/a/rust-toolchain.toml",
		"dir ws/hgrepo/.hg",
		"dir ws/jjrepo/.git",
		"dir ws/jjrepo/.jj",
		"link ws/linked/.git",
		"file ws/node_modules/x/node_modules/y/.git",
		"file ws/sub/.git",
		"dir ws/upper/.GIT",
		"dir ws/vendor/lib/.git",
	}
	if os.Geteuid() == 0 { // root reads a directory without permissions
		want = append(want[:10], append([]string{"dir ws/locked/.git"}, want[10:]...)...)
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("findEntries mismatch (-want +got):\n%s", diff)
	}
}

// GitStoreEntry knows a link into the git store only in the two forms the
// warden makes (ADR 0034); anything else is no store link.
func TestGitStoreEntry(t *testing.T) {
	dir := t.TempDir()
	for target, want := range map[string]string{
		"/run/claude-sandbox/git/made-0123456789abcdef":           "made-0123456789abcdef dir",
		"/run/claude-sandbox/git/sub-0123456789abcdef/d/d/d/.git": "sub-0123456789abcdef file",
		"/run/claude-sandbox/git/sub-0123456789abcdef/.git":       "sub-0123456789abcdef file",
		"/run/claude-sandbox/git/sub-0123456789abcdef/d/x/.git":   "",
		"/run/claude-sandbox/git/sub-0123456789abcdef/d/d/config": "",
		"/run/claude-sandbox/git/..":                              "",
		"/run/claude-sandbox/git/":                                "",
		"/run/claude-sandbox/gitx/made":                           "",
		"../run/claude-sandbox/git/made-0123456789abcdef":         "",
		"/elsewhere/made": "",
	} {
		link := filepath.Join(dir, "link")
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		name, file, ok := GitStoreEntry(link)
		got := ""
		if ok {
			got = name + map[bool]string{true: " file", false: " dir"}[file]
		}
		if got != want {
			t.Errorf("GitStoreEntry(-> %s) = %q, want %q", target, got, want)
		}
	}
}

// repos reads each ".git" link the walk found beneath its root, through
// no link: a directory a session swapped for a link to a directory
// outside, after the walk read it, yields no link from there.
func TestReadlinkBeneath(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(ws, "a"), 0o755)
	os.Symlink("/run/claude-sandbox/git/a-0123456789abcdef", filepath.Join(ws, "a", ".git"))
	os.Symlink("/run/claude-sandbox/git/outside-0123456789abcdef", filepath.Join(outside, ".git"))
	os.Symlink(outside, filepath.Join(ws, "swapped"))
	if got, ok := readlinkBeneath([]string{ws}, filepath.Join(ws, "a", ".git")); !ok || got != "/run/claude-sandbox/git/a-0123456789abcdef" {
		t.Errorf("a/.git: %q, %v", got, ok)
	}
	for _, p := range []string{filepath.Join(ws, "swapped", ".git"), filepath.Join(outside, ".git")} {
		if got, ok := readlinkBeneath([]string{ws}, p); ok {
			t.Errorf("%s read as %q: a link on the way, or outside the roots", p, got)
		}
	}
}
