package authproxy_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// emptyAt says whether the file name is empty.
func emptyAt(t *testing.T, name string) bool {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return len(data) == 0
}

// TestKeepMovesTheLogin: a login at Claude Code's path, which a session
// gave a second name (the login session, before any cover), is moved to a
// new kept file; the file it was in is emptied, so the second name reads
// nothing; the next Find takes the kept login. Red without the emptying.
func TestKeepMovesTheLogin(t *testing.T) {
	home := writeLogin(t, fileLogin)
	path := filepath.Join(home, layout.CredentialsFile)
	second := filepath.Join(home, ".claude/projects/second-name")
	if err := os.MkdirAll(filepath.Dir(second), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, second); err != nil {
		t.Fatal(err)
	}
	c := mustFind(t, nil, home)
	if c.Source != path {
		t.Errorf("Find took the login from %s, want %s", c.Source, path)
	}
	if err := c.Keep(); err != nil {
		t.Fatal(err)
	}
	if !emptyAt(t, second) || !emptyAt(t, path) {
		t.Error("the login's old file still holds it; want it emptied, whatever its names")
	}
	kept := filepath.Join(home, layout.KeptLogin)
	fi, err := os.Stat(kept)
	if err != nil {
		t.Fatal(err)
	}
	if n := fi.Sys().(*syscall.Stat_t).Nlink; n != 1 {
		t.Errorf("the kept login has %d names, want 1", n)
	}
	if dir, err := os.Stat(filepath.Dir(kept)); err != nil || dir.Mode().Perm() != 0o700 {
		t.Errorf("the kept login's directory: %v, %v; want mode 0700", dir, err)
	}
	again := mustFind(t, nil, home)
	if again.Source != kept {
		t.Errorf("the next Find took the login from %s, want %s", again.Source, kept)
	}
	if got := forwarded(t, again); got != "sk-ant-oat01-file" {
		t.Errorf("the kept login sends %q", got)
	}
	// A later launch: nothing to move, the kept file stays as it is.
	if err := again.Keep(); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(kept); err != nil || !os.SameFile(fi, after) {
		t.Errorf("a kept login with one name was moved again (%v)", err)
	}
}

// TestKeepMovesALinkedKeptLogin: a kept login that has another name (made
// by a sandbox that saw the directory: an older launcher's) is moved to a
// new file and the old one emptied. Red without the link count's check.
func TestKeepMovesALinkedKeptLogin(t *testing.T) {
	home := writeLogin(t, fileLogin)
	if err := mustFind(t, nil, home).Keep(); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(home, layout.KeptLogin)
	second := filepath.Join(home, "second-name")
	if err := os.Link(kept, second); err != nil {
		t.Fatal(err)
	}
	if err := mustFind(t, nil, home).Keep(); err != nil {
		t.Fatal(err)
	}
	if !emptyAt(t, second) {
		t.Error("the kept login's other name still reads it")
	}
	if got := forwarded(t, mustFind(t, nil, home)); got != "sk-ant-oat01-file" {
		t.Errorf("after the move the login sends %q", got)
	}
}

// TestKeepRefuses: the kept login's directory as a link refuses with the
// directory named and changes nothing.
func TestKeepRefuses(t *testing.T) {
	home := writeLogin(t, fileLogin)
	c := mustFind(t, nil, home)
	dir := filepath.Join(home, layout.KeptLoginDir)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	if err := c.Keep(); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Keep() through a linked directory = %v; want a refusal naming %s", err, dir)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("Keep wrote %v through the link", entries)
	}
	if emptyAt(t, filepath.Join(home, layout.CredentialsFile)) {
		t.Error("a refused Keep emptied the login")
	}
}

// TestRelease: with credentials = inside the kept login goes back where
// Claude Code reads it, unless a login is there already.
func TestRelease(t *testing.T) {
	home := writeLogin(t, fileLogin)
	if err := mustFind(t, nil, home).Keep(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, layout.CredentialsFile)
	if err := authproxy.Release(home); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != fileLogin {
		t.Errorf("after Release Claude Code's path holds %q (%v), want the login", data, err)
	}
	if _, err := os.Stat(filepath.Join(home, layout.KeptLogin)); !os.IsNotExist(err) {
		t.Errorf("the kept login is still there (%v)", err)
	}
	// A login at the path stays; nothing kept is put over it.
	if err := mustFind(t, nil, home).Keep(); err != nil {
		t.Fatal(err)
	}
	other := `{"claudeAiOauth":{"accessToken":"other"}}`
	if err := os.WriteFile(path, []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := authproxy.Release(home); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != other {
		t.Errorf("Release replaced the login at the path with %q", data)
	}
}

// While the launcher keeps the login, Claude Code's credentials file is
// there for the sandbox's cover: one the user removed is made again, empty,
// so that no session can write a login there that the next launch would
// move over the kept one.
func TestKeepLeavesAFileToCover(t *testing.T) {
	home := writeLogin(t, fileLogin)
	path := filepath.Join(home, layout.CredentialsFile)
	if err := mustFind(t, nil, home).Keep(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := mustFind(t, nil, home).Keep(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s after Keep: %v, %v; want an empty file of mode 0600", path, fi, err)
	}
	if got := forwarded(t, mustFind(t, nil, home)); got != "sk-ant-oat01-file" {
		t.Errorf("the kept login sends %q", got)
	}
}
