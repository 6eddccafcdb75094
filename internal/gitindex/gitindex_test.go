package gitindex

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// craft writes an index as git would, of version 2 to 4 with SHA-1 object
// IDs, listing paths (all regular files unless modes says otherwise), with
// the extensions given (name, then data) after the entries.
func craft(version uint32, paths []string, modes map[string]uint32, exts ...string) []byte {
	var b bytes.Buffer
	b.WriteString("DIRC")
	binary.Write(&b, binary.BigEndian, version)
	binary.Write(&b, binary.BigEndian, uint32(len(paths)))
	prev := ""
	for _, p := range paths {
		start := b.Len()
		var fixed [entryFixed]byte
		mode := uint32(0o100644)
		if m, ok := modes[p]; ok {
			mode = m
		}
		binary.BigEndian.PutUint32(fixed[24:], mode)
		b.Write(fixed[:])
		b.Write(make([]byte, SHA1))
		binary.Write(&b, binary.BigEndian, uint16(min(len(p), nameMask)))
		if version == 4 {
			common := 0
			for common < len(prev) && common < len(p) && prev[common] == p[common] {
				common++
			}
			b.WriteByte(byte(len(prev) - common)) // short names only
			b.WriteString(p[common:])
			b.WriteByte(0)
		} else {
			b.WriteString(p)
			for pad := (b.Len()-start+8)&^7 - (b.Len() - start); pad > 0; pad-- {
				b.WriteByte(0)
			}
		}
		prev = p
	}
	for i := 0; i+1 < len(exts); i += 2 {
		b.WriteString(exts[i])
		binary.Write(&b, binary.BigEndian, uint32(len(exts[i+1])))
		b.WriteString(exts[i+1])
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

// check reads data as an index of SHA-1 object IDs and verifies it, with
// refused, given each path, as the caller's rule.
func check(data []byte, refused func(string) string) (*Index, error) {
	ix, err := Parse(data, SHA1)
	if err != nil {
		return nil, err
	}
	var entryRefused func(Entry) string
	if refused != nil {
		entryRefused = func(e Entry) string { return refused(e.Path) }
	}
	return ix, ix.Verify(entryRefused)
}

func paths(ix *Index) []string {
	var out []string
	for _, e := range ix.Entries {
		out = append(out, e.Path)
	}
	return out
}

// gitRepo makes a repository with real git, runs setup in it, and returns
// its git directory.
func gitRepo(t *testing.T, initArgs []string, setup ...[]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(append([]string{"init", "-q"}, initArgs...)...)
	for _, d := range []string{"a/b", "c", "d/e/f"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	for _, f := range []string{"a/b/one", "a/b/two", "a/three", "c/four", "d/e/f/five", "six", ".gitignore"} {
		os.WriteFile(filepath.Join(dir, f), []byte("content of "+filepath.Base(f)), 0o644)
	}
	os.Symlink("six", filepath.Join(dir, "link"))
	for _, s := range setup {
		run(s...)
	}
	return filepath.Join(dir, ".git")
}

var want = []string{".gitignore", "a/b/one", "a/b/two", "a/three", "c/four", "d/e/f/five", "link", "six"}

// TestRealIndexes reads indexes git itself writes: every version, the
// extended flags, a split index and its shared index, SHA-256, and the
// threads' offset table.
func TestRealIndexes(t *testing.T) {
	add := []string{"add", "-A"}
	commit := []string{"commit", "-qm", "x"}
	cases := []struct {
		name  string
		init  []string
		setup [][]string
		hash  int
		want  []string
	}{
		{"v2", nil, [][]string{add, commit}, SHA1, want},
		{"v3", nil, [][]string{add, commit, {"update-index", "--skip-worktree", "six"}, {"rm", "-q", "--cached", "c/four"}, {"add", "-N", "c/four"}}, SHA1, want},
		{"v4", nil, [][]string{{"config", "index.version", "4"}, add, commit, {"update-index", "--index-version", "4"}}, SHA1, want},
		{"sha256", []string{"--object-format=sha256"}, [][]string{add, commit}, SHA256, want},
		{"threads", nil, [][]string{{"config", "index.threads", "4"}, {"config", "index.recordOffsetTable", "true"}, {"config", "index.recordEndOfIndexEntries", "true"}, add, {"update-index", "--index-version", "4"}}, SHA1, want},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gd := gitRepo(t, c.init, c.setup...)
			data, err := os.ReadFile(filepath.Join(gd, "index"))
			if err != nil {
				t.Fatal(err)
			}
			ix, err := Parse(data, c.hash)
			if err == nil {
				err = ix.Verify(nil)
			}
			if err != nil {
				t.Fatalf("git's own index refused: %v", err)
			}
			if c.name == "threads" && !(bytes.Contains(data, []byte("IEOT")) && bytes.Contains(data, []byte("EOIE"))) {
				t.Error("git wrote no offset table: the case checks nothing")
			}
			if c.want != nil && !slices.Equal(paths(ix), c.want) {
				t.Errorf("paths %q, want %q", paths(ix), c.want)
			}
		})
	}
}

// TestResolveUndo reads the resolve-undo extension git writes when a
// conflict is resolved.
func TestResolveUndo(t *testing.T) {
	gd := gitRepo(t, nil, []string{"add", "-A"}, []string{"commit", "-qm", "x"}, []string{"checkout", "-qb", "other"},
		[]string{"-c", "core.editor=true", "rm", "-q", "six"}, []string{"commit", "-qm", "y"}, []string{"checkout", "-q", "-"})
	script := "echo mine > six && git commit -qam z && ! git merge -q other && git add six"
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = filepath.Dir(gd)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(gd, "index"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("REUC")) {
		t.Fatal("git wrote no resolve-undo extension: the case checks nothing")
	}
	ix, err := check(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Undo) != 2 || ix.Undo[0].Path != "six" || len(ix.Entries) != len(want) {
		t.Errorf("entries %q, resolve-undo %v", paths(ix), ix.Undo)
	}
}

// TestSplitIndex reads a split index and its shared index as git writes
// them.
func TestSplitIndex(t *testing.T) {
	gd := gitRepo(t, nil, []string{"add", "-A"}, []string{"commit", "-qm", "x"}, []string{"update-index", "--split-index"})
	os.WriteFile(filepath.Join(filepath.Dir(gd), "seven"), nil, 0o644)
	os.WriteFile(filepath.Join(filepath.Dir(gd), "six"), []byte("changed"), 0o644)
	cmd := exec.Command("git", "add", "seven", "six")
	cmd.Dir = filepath.Dir(gd)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(gd, "index"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Parse(data, SHA1)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Shared == "" || len(ix.replaced) == 0 {
		t.Fatalf("no shared index named, or nothing replaced: %+v", ix)
	}
	shared, err := os.ReadFile(filepath.Join(gd, "sharedindex."+ix.Shared))
	if err != nil {
		t.Fatal(err)
	}
	sx, err := Parse(shared, SHA1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(paths(sx), want) {
		t.Errorf("shared index lists %q", paths(sx))
	}
	if err := ix.Merge(sx); err != nil {
		t.Fatal(err)
	}
	if got := paths(ix); !slices.Equal(got, append(slices.Clone(want), "seven")) {
		t.Errorf("merged %q", got)
	}
	// git's own view of the merged index: the same paths and IDs.
	cmd = exec.Command("git", "ls-files", "-s")
	cmd.Dir = filepath.Dir(gd)
	out, _ := cmd.Output()
	sorted := slices.Clone(ix.Entries)
	slices.SortFunc(sorted, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	var lines []string
	for _, e := range sorted {
		lines = append(lines, fmt.Sprintf("%06o %x 0\t%s", e.Mode, e.ID, e.Path))
	}
	if strings.Join(lines, "\n")+"\n" != string(out) {
		t.Errorf("merged:\n%s\ngit ls-files -s:\n%s", strings.Join(lines, "\n"), out)
	}
	if err := sx.Merge(ix); err == nil {
		t.Error("a shared index merged as a split one")
	}
}

// TestRefused crafts indexes listing what git would never check out, and
// what the caller refuses.
func TestRefused(t *testing.T) {
	bad := []string{
		".git/config", ".GIT/hooks/x", ".Git", "a/.git/config", ".git./x", ".git /x", ".git::$INDEX_ALLOCATION/x",
		"git~1/config", "GIT~1/hooks/pre-commit", ".g\u200cit/config", ".\ufeffgit/config", ".gi\u200dt", "a/.\u200eGIT/x",
		"..", "../x", "a/../x", "a/..", ".", "./x", "a/./x", "/etc/passwd", "a//b", "", "a/", "x\\.git\\config", "x\\git~1",
		".git\xff/x",
	}
	for _, v := range []uint32{2, 3, 4} {
		for _, p := range bad {
			if _, err := check(craft(v, []string{"ok", p}, nil), nil); err == nil {
				t.Errorf("v%d: %q let through", v, p)
			}
		}
	}
	links := []string{".gitmodules", ".GITMODULES", "a/.gitmodules", ".gitmodules.", ".gitmodules :x", "gitmod~1", "GITMOD~4", "gi7eba~1", ".g\u200cITmodules"}
	for _, p := range links {
		if _, err := check(craft(2, []string{p}, map[string]uint32{p: ModeSymlink}), nil); err == nil {
			t.Errorf("symlink %q let through", p)
		}
		if _, err := check(craft(2, []string{p}, nil), nil); err != nil {
			t.Errorf("file %q refused: %v", p, err)
		}
	}
	good := []string{".gitignore", ".github/workflows/x", ".gitx", "a.git", "git", "gitx~1", ".git~", "a/.gi/t", "...", ".a", "a\\b", "\u00e9t\u00e9"}
	if _, err := check(craft(2, good, nil), nil); err != nil {
		t.Errorf("ordinary names refused: %v", err)
	}
	policy := func(p string) string {
		if strings.HasSuffix(p, ".envrc") || p == ".claude/settings.local.json" {
			return "refused"
		}
		return ""
	}
	for _, p := range []string{".claude/settings.local.json", "a/b/c/d/.envrc"} {
		if _, err := check(craft(4, []string{"a", p}, nil), policy); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%q: %v", p, err)
		}
	}
}

// TestExtensions: a resolve-undo extension's paths are checked; an
// extension git does not know and may not ignore, and a shared index's
// name a shared index gives, are refused.
func TestExtensions(t *testing.T) {
	reuc := ".git/hooks/post-checkout\x00100755\x000\x000\x00" + strings.Repeat("\x00", SHA1)
	if _, err := check(craft(2, []string{"a"}, nil, "REUC", reuc), nil); err == nil {
		t.Error("resolve-undo path let through")
	}
	if _, err := check(craft(2, []string{"a"}, nil, "REUC", "ok\x00100644\x000\x000\x00"+strings.Repeat("\x00", SHA1)), nil); err != nil {
		t.Error(err)
	}
	if _, err := check(craft(2, []string{"a"}, nil, "zzzz", ""), nil); err == nil {
		t.Error("unknown lower-case extension let through")
	}
	if _, err := check(craft(2, []string{"a"}, nil, "ZZZZ", "x"), nil); err != nil {
		t.Errorf("optional extension refused: %v", err)
	}
	// A split index: its first entries replace the shared index's the
	// replace bitmap names, keeping their names; the rest are added.
	bitmap := func(bits uint64) string { // one literal word
		var b [24]byte
		binary.BigEndian.PutUint32(b[0:], 64)
		binary.BigEndian.PutUint32(b[4:], 2)
		binary.BigEndian.PutUint64(b[8:], 1<<33)
		binary.BigEndian.PutUint64(b[16:], bits)
		return string(b[:]) + "\x00\x00\x00\x00"
	}
	link := strings.Repeat("\x01", SHA1) + bitmap(0) + bitmap(1<<1)
	split, err := Parse(craft(2, []string{"", "new"}, map[string]uint32{"": ModeSymlink}, "link", link), SHA1)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := Parse(craft(2, []string{"a", ".gitmodules", "c"}, nil), SHA1)
	if err := split.Merge(base); err != nil {
		t.Fatal(err)
	}
	if got := paths(split); !slices.Equal(got, []string{"a", ".gitmodules", "c", "new"}) || split.Entries[1].Mode != ModeSymlink {
		t.Errorf("merged %v", split.Entries)
	}
	if err := split.Verify(nil); err == nil {
		t.Error("a replacement making .gitmodules a symbolic link let through")
	}
	bad, _ := Parse(craft(2, []string{"named"}, nil, "link", strings.Repeat("\x01", SHA1)+bitmap(0)+bitmap(1)), SHA1)
	if err := bad.Merge(base); err == nil {
		t.Error("a replacement with a name merged")
	}
	if _, err := check(craft(2, []string{"a", ""}, nil), nil); err == nil {
		t.Error("an empty name let through in an index not split")
	}
	if _, err := Parse(craft(2, []string{"a"}, nil, "link", strings.Repeat("\x01", SHA1)+bitmap(0)+bitmap(1)+"x"), SHA1); err == nil {
		t.Error("garbage after the bitmaps let through")
	}
}

// TestMalformed: what git could read otherwise than in order, or not at
// all, is refused.
func TestMalformed(t *testing.T) {
	good := craft(2, []string{"a", "b"}, nil)
	cases := map[string][]byte{
		"short":     good[:20],
		"signature": append([]byte("DIRD"), good[4:]...),
		"version 5": append([]byte("DIRC\x00\x00\x00\x05"), good[8:]...),
		"truncated": good[:len(good)-30],
		"count":     append(append(append([]byte{}, good[:8]...), 0, 0, 0, 3), good[12:]...),
		// the threads' offset table naming a block that starts inside an
		// entry, and an end-of-entries record naming another place
		"ieot": craft(2, []string{"a", "b"}, nil, "IEOT", "\x00\x00\x00\x01\x00\x00\x00\x0d\x00\x00\x00\x02"),
		"eoie": craft(2, []string{"a"}, nil, "EOIE", "\x00\x00\x00\x0c"+strings.Repeat("\x00", SHA1)),
	}
	for name, data := range cases {
		if _, err := check(data, nil); err == nil {
			t.Errorf("%s: let through", name)
		}
	}
	// A NUL inside a name, and a name whose length disagrees with its NUL.
	nul := craft(2, []string{"abc/x"}, nil)
	nul[headerSize+entryFixed+SHA1+2+3] = 0
	if _, err := check(nul, nil); err == nil {
		t.Error("NUL inside a name let through")
	}
	v4 := craft(4, []string{"abc"}, nil)
	binary.BigEndian.PutUint16(v4[headerSize+entryFixed+SHA1:], 2)
	if _, err := check(v4, nil); err == nil {
		t.Error("v4 name length disagreeing with its NUL let through")
	}
}
