package warden

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

// gitIn runs git in dir, outside any user's configuration.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// indexWardenCase is a workspace holding a repository whose index lists
// names of the same length as the ones an attacker would put there, and a
// warden with rules of each kind for it.
func indexWardenCase(t *testing.T) (ws string, w *Warden, index []byte) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ws = t.TempDir()
	gitIn(t, ws, "init", "-q")
	for _, f := range []string{"xgit/config", "xclaude/settings.local.json", "a/b/xenvrc", "tools/xoolchain", "ok/file"} {
		os.MkdirAll(filepath.Join(ws, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(ws, f), []byte("x"), 0o644)
	}
	os.Mkdir(filepath.Join(ws, "tools"), 0o755)
	gitIn(t, ws, "add", "-A")
	index, err := os.ReadFile(filepath.Join(ws, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	w, err = New(-1, Rules{Rules: namerule.Rules{
		Outside:     []namerule.Outside{{Name: ".git", Why: "outside"}, {Name: ".envrc", Why: "direnv runs it"}},
		InNamedDirs: []namerule.InNamedDir{{Dir: ".claude", Names: []string{"settings.local.json"}, Why: "claude settings"}},
		Dirs:        []namerule.InDir{{Dir: filepath.Join(ws, "tools"), Names: []string{"toolchain"}, Why: "a toolchain selector"}},
		Paths:       []namerule.Path{{Path: filepath.Join(ws, "ok", "held"), Why: "a protected path"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(root) })
	w.root = root
	return ws, w, index
}

// TestIndexCarried: a rename over a git directory's index is carried out
// by the warden, as a copy, only when every path listed is one git checks
// out and the sandbox may write; any other way to write the index is
// refused. Red without carryIndex's check, renameIndex, or refuseIndex.
// Indexes are carried one at a time, whatever the workers: a carry waits
// while another holds its index in the launcher's memory, and goes on when
// that one is done.
func TestIndexCarriedOneAtATime(t *testing.T) {
	ws, w, good := indexWardenCase(t)
	gitDir := filepath.Join(ws, ".git")
	dir := openPath(t, gitDir)
	if err := os.WriteFile(filepath.Join(gitDir, "index.lock"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	carrying <- struct{}{} // another carry under way
	done := make(chan unix.Errno)
	go func() {
		_, e := w.renameIndex(resolved{dir: dir, name: "index.lock", file: -1}, resolved{dir: dir, name: "index", file: -1}, 0)
		done <- e
	}()
	select {
	case e := <-done:
		<-carrying
		t.Fatalf("a carry went on while another held its index (errno %v)", e)
	case <-time.After(200 * time.Millisecond):
	}
	<-carrying
	if e := <-done; e != 0 {
		t.Fatalf("the carry, once the other was done: %v", e)
	}
	if got, _ := os.ReadFile(filepath.Join(gitDir, "index")); !bytes.Equal(got, good) {
		t.Error("the index is not the carried copy")
	}
}

func TestIndexCarried(t *testing.T) {
	ws, w, good := indexWardenCase(t)
	gitDir := filepath.Join(ws, ".git")
	dir := openPath(t, gitDir)
	var refusals []string
	w.Refused = func(path, why string) { refusals = append(refusals, path+": "+why) }
	put := func(name string, data []byte) resolved {
		t.Helper()
		if err := os.WriteFile(filepath.Join(gitDir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return resolved{dir: dir, name: name, file: -1}
	}
	to := resolved{dir: dir, name: "index", file: -1}

	// git's own index, renamed from index.lock, arrives as a copy: the
	// lock's descriptor, written on, reaches nothing.
	lock, err := os.OpenFile(filepath.Join(gitDir, "index.lock"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	lock.Write(good)
	if carried, e := w.renameIndex(resolved{dir: dir, name: "index.lock", file: -1}, to, 0); !carried || e != 0 {
		t.Fatalf("git's own index: carried %v, %v; refusals %q", carried, e, refusals)
	}
	lock.WriteAt([]byte("DIRC\x00\x00\x00\x09"), 0)
	if got, _ := os.ReadFile(filepath.Join(gitDir, "index")); !bytes.Equal(got, good) {
		t.Error("the index is not the checked copy")
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "index.lock")); err == nil {
		t.Error("index.lock left after the rename")
	}
	if out := gitIn(t, ws, "ls-files"); !strings.Contains(out, "ok/file") {
		t.Errorf("git cannot read the carried index: %s", out)
	}
	// The same through the warden's rename, as the task's call arrives.
	put("index.lock", good)
	wk := &walker{root: w.root, self: selfIDs}
	if e := w.rename(wk, unix.AT_FDCWD, filepath.Join(gitDir, "index.lock"), unix.AT_FDCWD, filepath.Join(gitDir, "index"), request{}); e != 0 {
		t.Fatalf("rename of git's own index.lock: %v; refusals %q", e, refusals)
	}

	// Each class, spelled as git writes it, and in other spellings.
	for _, bad := range []struct{ from, to string }{
		{"xgit/config", ".git/config"},
		{"xgit/config", ".GIT/config"},
		{"xgit/config", "git~1/config"},
		{"xclaude/settings.local.json", ".claude/settings.local.json"},
		{"xclaude/settings.local.json", ".CLAUDE/settings.local.json"},
		{"a/b/xenvrc", "a/b/.envrc"},
		{"a/b/xenvrc", "a/b/.ENVRC"},
		{"tools/xoolchain", "tools/toolchain"},
		{"ok/file", "ok/held"},
	} {
		data := bytes.Replace(good, []byte(bad.from), []byte(bad.to), 1)
		for _, name := range []string{"index", "INDEX", "sharedindex.0123"} {
			refusals = nil
			carried, e := w.renameIndex(put("index.lock", data), resolved{dir: dir, name: name, file: -1}, 0)
			if !carried || e != unix.EPERM || len(refusals) != 1 {
				t.Errorf("%s as %s: carried %v, %v, refusals %q; want refused", bad.to, name, carried, e, refusals)
			}
		}
	}
	if got, _ := os.ReadFile(filepath.Join(gitDir, "index")); !bytes.Equal(got, good) {
		t.Error("a refused index changed the index")
	}

	// A file larger than any index is not read into the launcher.
	huge := put("huge", nil)
	if err := os.Truncate(filepath.Join(gitDir, "huge"), maxIndex+1); err != nil {
		t.Fatal(err)
	}
	if carried, e := w.renameIndex(huge, to, 0); !carried || e != unix.EFBIG {
		t.Errorf("a file of 1 GiB and a byte: carried %v, %v; want EFBIG", carried, e)
	}

	// No way but the carried rename makes or writes an index: an open
	// for writing or a new name (check), a truncation, a link to it or of
	// it, a symbolic link by its name, a rename to the warden's own
	// copy's name, an exchange.
	for _, name := range []string{"index", "Index", "sharedindex.abc", carryPrefix + "1"} {
		if e := w.check(resolved{dir: dir, name: name, file: -1}); e != unix.EPERM {
			t.Errorf("writing %s: %v, want EPERM", name, e)
		}
	}
	abs := func(name string) string { return filepath.Join(gitDir, name) }
	put("other", good)
	for what, e := range map[string]unix.Errno{
		"truncate":         w.truncate(wk, unix.AT_FDCWD, abs("index"), 0),
		"link to it":       w.link(wk, unix.AT_FDCWD, abs("other"), unix.AT_FDCWD, abs("index"), request{}),
		"link of it":       w.link(wk, unix.AT_FDCWD, abs("index"), unix.AT_FDCWD, filepath.Join(ws, "second"), request{}),
		"symbolic link":    w.symlink(wk, unix.AT_FDCWD, abs("sharedindex.abc"), filepath.Join(ws, "ok", "file")),
		"rename to a copy": w.rename(wk, unix.AT_FDCWD, abs("other"), unix.AT_FDCWD, abs(carryPrefix+"1"), request{}),
		"exchange":         w.rename(wk, unix.AT_FDCWD, abs("other"), unix.AT_FDCWD, abs("index"), request{flags: unix.RENAME_EXCHANGE}),
		"whiteout":         w.rename(wk, unix.AT_FDCWD, abs("other"), unix.AT_FDCWD, abs("index"), request{flags: unix.RENAME_WHITEOUT}),
	} {
		if e != unix.EPERM {
			t.Errorf("%s: %v, want EPERM", what, e)
		}
	}
	held, err := unix.Open(abs("index"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(held)
	if e := w.check(resolved{dir: -1, file: held}); e != unix.EPERM {
		t.Errorf("the index reopened through a descriptor: %v, want EPERM", e)
	}
	if got, _ := os.ReadFile(abs("index")); !bytes.Equal(got, good) {
		t.Error("the index changed")
	}

	// A directory not named .git, and not found at launch, is no git
	// directory: its "index" is any file.
	plain := filepath.Join(ws, "plain")
	os.Mkdir(plain, 0o755)
	pfd := openPath(t, plain)
	os.WriteFile(filepath.Join(plain, "new"), []byte("x"), 0o644)
	if carried, _ := w.renameIndex(resolved{dir: pfd, name: "new", file: -1}, resolved{dir: pfd, name: "index", file: -1}, 0); carried {
		t.Error("a plain directory's index carried")
	}
	// ... unless the launch found it as a git directory.
	w.gitDirs = openGitDirs([]namerule.GitDir{{Dir: plain, Tops: []string{ws}}})
	data := bytes.Replace(good, []byte("a/b/xenvrc"), []byte("a/b/.envrc"), 1)
	os.WriteFile(filepath.Join(plain, "new"), data, 0o644)
	if carried, e := w.renameIndex(resolved{dir: pfd, name: "new", file: -1}, resolved{dir: pfd, name: "index", file: -1}, 0); !carried || e != unix.EPERM {
		t.Errorf("a git directory found at launch: carried %v, %v; want refused", carried, e)
	}
}

// TestIndexKeepsTheUsersOwn: an entry at a path the sandbox may not
// write is let through when it is the user's own, what the index it
// replaces holds there or what the file there holds (a repository that
// tracks its .claude/settings.local.json), and refused otherwise: other
// content, another executable bit. Red without indexRule's allowances
// (git add inside fails in every repository tracking a protected file),
// or without their comparisons.
func TestIndexKeepsTheUsersOwn(t *testing.T) {
	ws, w, _ := indexWardenCase(t)
	gitDir := filepath.Join(ws, ".git")
	dir := openPath(t, gitDir)
	settings := filepath.Join(ws, ".claude", "settings.local.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	os.WriteFile(settings, []byte("{}\n"), 0o644)
	gitIn(t, ws, "add", ".claude/settings.local.json")
	own, _ := os.ReadFile(filepath.Join(gitDir, "index"))
	rename := func(data []byte) unix.Errno {
		t.Helper()
		os.WriteFile(filepath.Join(gitDir, "index.lock"), data, 0o644)
		carried, e := w.renameIndex(resolved{dir: dir, name: "index.lock", file: -1}, resolved{dir: dir, name: "index", file: -1}, 0)
		if !carried {
			t.Fatal("not carried")
		}
		os.Remove(filepath.Join(gitDir, "index.lock"))
		return e
	}
	if e := rename(own); e != 0 {
		t.Errorf("the index git wrote, the file's own entry: %v", e)
	}
	// Changed outside since: the index it replaces holds the entry.
	os.WriteFile(settings, []byte("{\"changed\": 1}\n"), 0o644)
	if e := rename(own); e != 0 {
		t.Errorf("the entry the index holds already: %v", e)
	}
	// Other content than either holds.
	gitIn(t, ws, "add", ".claude/settings.local.json")
	other, _ := os.ReadFile(filepath.Join(gitDir, "index"))
	os.WriteFile(filepath.Join(gitDir, "index"), own, 0o644)
	os.WriteFile(settings, []byte("{\"third\": 1}\n"), 0o644)
	if e := rename(other); e != unix.EPERM {
		t.Errorf("content neither the index nor the file holds: %v, want EPERM", e)
	}
	os.WriteFile(settings, []byte("{\"changed\": 1}\n"), 0o644)
	// With no index before it, only the file can vouch for the entry.
	os.Remove(filepath.Join(gitDir, "index"))
	if e := rename(own); e != unix.EPERM {
		t.Errorf("an entry neither the index nor the file holds: %v, want EPERM", e)
	}
	os.WriteFile(settings, []byte("{}\n"), 0o755)
	os.Chmod(settings, 0o755)
	if e := rename(own); e != unix.EPERM {
		t.Errorf("an entry of another executable bit: %v, want EPERM", e)
	}
	os.Chmod(settings, 0o644)
	if e := rename(own); e != 0 {
		t.Errorf("the file's own entry, no index before: %v", e)
	}
}

// TestRefusedPath: a path an index lists is refused as the sandbox's own
// writes would be, below a known top, or only by the rules that need
// none.
func TestRefusedPath(t *testing.T) {
	ws, w, _ := indexWardenCase(t)
	for rel, refused := range map[string]bool{
		"tools/toolchain":               true,
		"tools/TOOLCHAIN/x":             true, // below a refused name
		"ok/held":                       true,
		"ok/held/deep":                  true,
		"ok":                            true, // a file on the way to a protected path
		"ok/other":                      false,
		".claude/settings.local.json":   true,
		"a/.claude/Settings.Local.JSON": true,
		"a\\.envrc":                     true, // a backslash separates on Windows
		"a/b/.ENVRC.":                   true,
		"a/b/c":                         false,
		"tools/x":                       false,
	} {
		if got := w.refusedPath(pathKeys(ws), rel); (got != "") != refused {
			t.Errorf("refusedPath(%q) = %q, want refused %v", rel, got, refused)
		}
	}
	for rel, refused := range map[string]bool{".claude/settings.local.json": true, "x/.envrc": true, "ok/held": false, "tools/toolchain": false} {
		if got := w.refusedPath(nil, rel); (got != "") != refused {
			t.Errorf("refusedPath(%q) below no known top = %q, want refused %v", rel, got, refused)
		}
	}
}

// TestIndexObjectFormat: the object format comes from the repository's
// configuration, and from the launch's copy where the sandbox writes its
// own.
func TestIndexObjectFormat(t *testing.T) {
	for _, c := range []struct {
		config string
		want   int
		ok     bool
	}{
		{"", 20, true},
		{"[core]\n\tbare = false\n", 20, true},
		{"[extensions]\n\tobjectFormat = sha256\n", 32, true},
		{"[extensions]\n\tobjectformat=SHA1 # x\n", 20, true},
		{"[extensions] objectFormat = sha256\n", 32, true},
		{"[extensions]\n\tobjectformat = md5\n", 0, false},
		{"[extensions]\n\tobjectformat = sha\\\n256\n", 0, false},
		{"[extensions]\n\tobjectformat = sha1\n\tobjectformat = sha256\n", 0, false},
	} {
		got, err := objectFormat([]byte(c.config))
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("objectFormat(%q) = %d, %v", c.config, got, err)
		}
	}
	ws, w, _ := indexWardenCase(t)
	gitDir := filepath.Join(ws, ".git")
	launch := filepath.Join(t.TempDir(), "config.launch")
	os.WriteFile(launch, []byte("[extensions]\nobjectformat = sha256\n"), 0o644)
	var st unix.Stat_t
	unix.Stat(gitDir, &st)
	w.copies = map[fileID]copyThrough{{st.Dev, st.Ino}: {name: "config", launch: launch}}
	if got, err := w.hashSize(openPath(t, gitDir)); got != 32 || err != nil {
		t.Errorf("hashSize with the launch's copy = %d, %v; want 32", got, err)
	}
}

// BenchmarkCheckIndex is the check of an index of 100,000 entries, as
// git add renames one into place in a large repository: read, every path
// verified, and every path against rules as many as the policy's (15
// outside names, 8 named directories with 26 names, 12 protected paths, 4
// directories' rules). The index is git's own (git update-index).
func BenchmarkCheckIndex(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	ws := b.TempDir()
	var list strings.Builder
	const blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&list, "100644 %s\tsrc/module%03d/pkg%02d/internal/file%05d.go\n", blob, i/1000, i/100%10, i)
	}
	for _, args := range [][]string{{"init", "-q"}, {"update-index", "--index-info"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Stdin = strings.NewReader(list.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	data, err := os.ReadFile(filepath.Join(ws, ".git", "index"))
	if err != nil {
		b.Fatal(err)
	}
	rules := Rules{}
	for i := 0; i < 15; i++ {
		rules.Outside = append(rules.Outside, namerule.Outside{Name: fmt.Sprintf(".outside%d", i), Why: "x"})
	}
	for i := 0; i < 8; i++ {
		d := namerule.InNamedDir{Dir: fmt.Sprintf(".named%d", i), Why: "x"}
		for j := 0; j < 4; j++ {
			d.Names = append(d.Names, fmt.Sprintf("entry%d", j))
		}
		rules.InNamedDirs = append(rules.InNamedDirs, d)
	}
	for i := 0; i < 12; i++ {
		rules.Paths = append(rules.Paths, namerule.Path{Path: filepath.Join(ws, fmt.Sprintf(".protected%d/file", i)), Why: "x"})
	}
	for i := 0; i < 4; i++ {
		dir := filepath.Join(ws, fmt.Sprintf("ruled%d", i))
		os.Mkdir(dir, 0o755)
		rules.Dirs = append(rules.Dirs, namerule.InDir{Dir: dir, Names: []string{"a", "b"}, Why: "x"})
	}
	w, err := New(-1, rules)
	if err != nil {
		b.Fatal(err)
	}
	w.root, _ = unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	dir, _ := unix.Open(filepath.Join(ws, ".git"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.checkIndex(dir, data, []string{ws}, false); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIndexSHA256: in a repository of SHA-256 objects the index is read
// with their size, and a tracked file's entry is vouched for by its
// SHA-256 blob ID.
func TestIndexSHA256(t *testing.T) {
	ws, w, _ := indexWardenCase(t)
	repo := filepath.Join(ws, "sub")
	os.MkdirAll(filepath.Join(repo, ".claude"), 0o755)
	gitIn(t, repo, "init", "-q", "--object-format=sha256")
	os.WriteFile(filepath.Join(repo, ".claude", "settings.local.json"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "xgit"), []byte("x"), 0o644)
	gitIn(t, repo, "add", ".")
	gitDir := filepath.Join(repo, ".git")
	dir := openPath(t, gitDir)
	good, _ := os.ReadFile(filepath.Join(gitDir, "index"))
	os.Remove(filepath.Join(gitDir, "index")) // the file alone vouches for the settings
	for _, c := range []struct {
		data []byte
		want unix.Errno
	}{
		{good, 0},
		{bytes.Replace(good, []byte("xgit"), []byte(".git"), 1), unix.EPERM},
	} {
		os.WriteFile(filepath.Join(gitDir, "index.lock"), c.data, 0o644)
		if carried, e := w.renameIndex(resolved{dir: dir, name: "index.lock", file: -1}, resolved{dir: dir, name: "index", file: -1}, 0); !carried || e != c.want {
			t.Errorf("carried %v, %v; want %v", carried, e, c.want)
		}
		os.Remove(filepath.Join(gitDir, "index.lock"))
	}
	if out := gitIn(t, repo, "ls-files"); !strings.Contains(out, "xgit") {
		t.Errorf("git cannot read the carried index: %s", out)
	}
}
