package warden

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

// A walker's one-call descent (descend) and its walk a component at a
// time (walkComponents) resolve every path alike: the same directory (by
// device, inode and mount) and name, or the same file, or the same error;
// and the descent decides only paths that descend without a link, never
// one the walk refuses. Each case is walked both ways, with and without
// following a last link, and leaves no descriptor open.
func TestDescendDecidesAsTheWalk(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/b/c", "a/7", "c"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "a/f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"abs":       "/a/b",
		"rel":       "a/b",
		"a/b/up":    "..",
		"out":       "../../../..",
		"slash":     "/",
		"loop1":     "loop2",
		"loop2":     "loop1",
		"dangling":  "nothing",
		"a/b/last":  "../../c",
		"a/b/alast": "/c",
		"c/climb":   "../a",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	rootFD := openPath(t, root)
	startA := openPath(t, filepath.Join(root, "a"))
	startC := openPath(t, filepath.Join(root, "c"))
	// The host's own root, for its mounts and its /proc.
	hostFD := openPath(t, "/")
	held, err := os.CreateTemp(t.TempDir(), "held")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, err = os.Stat("/dev/shm")
	shm := err == nil
	pid := strconv.Itoa(os.Getpid())
	other := func() (string, string, error) { return "999999999", "999999999", nil }

	type walkCase struct {
		root, start int
		path        string
		links       int // already followed by the walker
		self        func() (string, string, error)
		descends    bool // descend decides it
		lastLink    bool // but not with follow: its last name is a link, or cannot be looked at
	}
	in := func(start int, path string, descends bool) walkCase {
		return walkCase{root: rootFD, start: start, path: path, self: selfIDs, descends: descends}
	}
	onHost := func(path string, self func() (string, string, error)) walkCase {
		return walkCase{root: hostFD, start: hostFD, path: path, self: self}
	}
	cases := []walkCase{
		in(rootFD, "a/b/new", true),
		in(rootFD, "a/b/c", true),
		in(rootFD, "a/b/c/", true),
		in(rootFD, "a//b///new", true),
		in(rootFD, "./a/./b/new", true),
		in(startC, "/a/b/new", true),
		in(startC, "//a/b/new", true),
		in(startA, "b/c/new", true),
		in(startA, "7/x", true),
		in(rootFD, "a/f", true),
		{root: rootFD, start: rootFD, path: "a/b/last", self: selfIDs, descends: true, lastLink: true},
		{root: rootFD, start: startA, path: "b/alast", self: selfIDs, descends: true, lastLink: true},
		{root: rootFD, start: rootFD, path: "a/f/x", self: selfIDs, descends: true, lastLink: true}, // a file as the directory
		in(rootFD, "missing/x", false),
		in(rootFD, "a/missing/x", false),
		in(rootFD, "rel/new", false),
		in(rootFD, "abs/new", false),
		in(rootFD, "a/b/up/new", false),
		in(rootFD, "out/x", false),
		in(rootFD, "slash/a/x", false),
		in(rootFD, "loop1/x", false),
		in(rootFD, "dangling/x", false),
		in(startC, "climb/b/x", false),
		in(startA, "../x", false),
		in(rootFD, "../x", false),
		in(rootFD, "a/../../x", false),
		in(rootFD, "a/../c/new", false),
		in(rootFD, "a/b/..", false),
		in(rootFD, "a/b/.", false),
		in(rootFD, "/", false),
		in(rootFD, "/x", false),
		in(startA, "x", false),
		in(rootFD, "", false),
		{root: rootFD, start: rootFD, path: "rel/new", links: maxLinks, self: selfIDs},
		{root: rootFD, start: rootFD, path: "a/b/c", links: maxLinks, self: selfIDs, descends: true},
		// A mount crossed on the way, as the walk crosses it: /dev, and
		// /dev/shm where there is one.
		{root: hostFD, start: hostFD, path: "/dev/new", self: selfIDs, descends: true},
		{root: hostFD, start: hostFD, path: "/dev/shm/new", self: selfIDs, descends: shm},
		{root: hostFD, start: hostFD, path: "dev/shm/", self: selfIDs, descends: shm},
		// /proc: self is the task, and another process's files are not
		// the task's to write; the descent leaves all of /proc to the walk.
		onHost("/proc/self/status", selfIDs),
		onHost("/proc/thread-self/comm", selfIDs),
		onHost(fmt.Sprintf("/proc/self/fd/%d", held.Fd()), selfIDs),
		onHost("/proc/"+pid+"/mem", selfIDs),
		onHost("/proc/"+pid+"/mem", other),
		onHost("/proc/"+pid+"/attr/current", other),
		onHost("/proc/sys/kernel/x", selfIDs),
		onHost("proc/mounts", selfIDs),
	}
	openFDs := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	before := openFDs()
	for _, tc := range cases {
		for _, follow := range []bool{false, true} {
			name := fmt.Sprintf("%q (follow %v)", tc.path, follow)
			byComponent := &walker{root: tc.root, self: tc.self, links: tc.links}
			want, wantErr := byComponent.walkComponents(tc.start, tc.path, follow)
			descent := &walker{root: tc.root, self: tc.self, links: tc.links}
			got, ok := descent.descend(tc.start, tc.path, follow)
			if decides := tc.descends && !(follow && tc.lastLink); ok != decides {
				t.Errorf("%s: descend decided %v, want %v", name, ok, decides)
			}
			if ok && wantErr != nil {
				t.Errorf("%s: descend resolved what the walk refuses (%v)", name, wantErr)
			}
			if ok && wantErr == nil && !sameResolved(got, want) {
				t.Errorf("%s: descend gave %s, the walk %s", name, describe(got), describe(want))
			}
			// walk itself: the descent where it decides, else the walk.
			viaWalk, err := (&walker{root: tc.root, self: tc.self, links: tc.links}).walk(tc.start, tc.path, follow)
			if !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
				t.Errorf("%s: walk error %v, walkComponents %v", name, err, wantErr)
			} else if err == nil && !sameResolved(viaWalk, want) {
				t.Errorf("%s: walk gave %s, walkComponents %s", name, describe(viaWalk), describe(want))
			}
			if ok {
				got.close()
			}
			if wantErr == nil {
				want.close()
			}
			if err == nil {
				viaWalk.close()
			}
		}
	}
	// What the descent opened and left to the walk, it closed.
	if after := openFDs(); after != before {
		t.Errorf("%d descriptors open after the walks, %d before", after, before)
	}
}

// sameResolved reports whether a and b lead to the same place: the same
// name in the same directory on the same mount, or the same file.
func sameResolved(a, b resolved) bool {
	if a.name != b.name || a.borrowed != b.borrowed || (a.dir < 0) != (b.dir < 0) || (a.file < 0) != (b.file < 0) {
		return false
	}
	if a.dir >= 0 && identity(a.dir) != identity(b.dir) {
		return false
	}
	return a.file < 0 || identity(a.file) == identity(b.file)
}

type fdIdentity struct {
	dev, ino, mnt uint64
}

func identity(fd int) fdIdentity {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_MNT_ID, &st); err != nil {
		return fdIdentity{}
	}
	return fdIdentity{unix.Mkdev(st.Dev_major, st.Dev_minor), st.Ino, st.Mnt_id}
}

func describe(r resolved) string {
	if r.dir >= 0 {
		return fmt.Sprintf("%s, %q", fdPath(r.dir), r.name)
	}
	if r.file >= 0 {
		return "the file " + fdPath(r.file)
	}
	return "nothing"
}

// BenchmarkWalk resolves a path of the shape tar x makes in the workspace
// (three directories, then a new file's name), a component at a time and
// by the descent, in one run:
//
//	go test ./warden/ -run '^$' -bench Walk -count 5
func BenchmarkWalk(b *testing.B) {
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "src/d07/e3"), 0o755); err != nil {
		b.Fatal(err)
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(rootFD)
	for _, how := range []struct {
		name string
		walk func(w *walker, start int, path string, follow bool) (resolved, error)
	}{
		{"components", (*walker).walkComponents},
		{"walk", (*walker).walk},
	} {
		for _, follow := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/follow=%v", how.name, follow), func(b *testing.B) {
				for b.Loop() {
					w := &walker{root: rootFD, self: selfIDs}
					r, err := how.walk(w, rootFD, "src/d07/e3/f1234.c", follow)
					if err != nil || r.name != "f1234.c" {
						b.Fatalf("%q, %v", r.name, err)
					}
					r.close()
				}
			})
		}
	}
}

// BenchmarkCheckMake checks a new file's name in a directory of the
// workspace (not the sandbox's own) against rules of a plan's size: the
// outside names, a named directory's names, a few protected paths.
//
//	go test ./warden/ -run '^$' -bench CheckMake -count 5
func BenchmarkCheckMake(b *testing.B) {
	ws := b.TempDir()
	deep := filepath.Join(ws, "src/d07/e3")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		b.Fatal(err)
	}
	rules := namerule.Rules{InNamedDirs: []namerule.InNamedDir{
		{Dir: ".git", Names: []string{"hooks", "config", "commondir", "modules", "worktrees"}, Why: "git"},
		{Dir: ".claude", Names: []string{"settings.json", "settings.local.json"}, Why: "claude"},
	}}
	for _, n := range []string{".git", ".mcp.json", ".hg", ".sl", ".jj", "rust-toolchain.toml", ".yarnrc.yml", ".envrc", "mise.toml"} {
		rules.Outside = append(rules.Outside, namerule.Outside{Name: n, Why: "outside"})
	}
	for _, p := range []string{".vscode", ".idea", ".claude/settings.json", ".devcontainer"} {
		rules.Paths = append(rules.Paths, namerule.Path{Path: filepath.Join(ws, p), Why: "protected"})
	}
	w, err := New(-1, Rules{Rules: rules})
	if err != nil {
		b.Fatal(err)
	}
	dir, err := unix.Open(deep, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(dir)
	for b.Loop() {
		if e := w.checkMake(resolved{dir: dir, name: "f1234.c", file: -1}, false); e != 0 {
			b.Fatal(e)
		}
	}
}
