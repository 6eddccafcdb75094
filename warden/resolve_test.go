package warden

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

func openPath(t *testing.T, p string) int {
	t.Helper()
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func selfIDs() (string, string, error) {
	return strconv.Itoa(os.Getpid()), strconv.Itoa(unix.Gettid()), nil
}

// A tree standing for a task's root: links that climb out or jump to "/"
// stay inside it.
func TestWalkStaysInTheRoot(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"abs":      "/a/b",
		"up":       "../../../..",
		"loop1":    "loop2",
		"loop2":    "loop1",
		"dangling": ".git",
		"slash":    "/",
		"c/rel":    "../a",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rootFD := openPath(t, root)
	startC := openPath(t, filepath.Join(root, "c"))
	tests := []struct {
		start     int
		path      string
		follow    bool
		dir, name string
		err       error
	}{
		{rootFD, "/abs/new", false, "a/b", "new", nil},
		{rootFD, "abs", false, "", "abs", nil},
		{rootFD, "abs", true, "a", "b", nil},
		{startC, "../../../../../file", false, "", "file", nil},
		{startC, "/../../a/x", false, "a", "x", nil},
		{rootFD, "up/a", false, "", "a", nil},
		{rootFD, "up/../../c/new", false, "c", "new", nil},
		{startC, "rel/b/n", false, "a/b", "n", nil},
		{rootFD, "loop1/x", false, "", "", unix.ELOOP},
		{rootFD, "loop1", true, "", "", unix.ELOOP},
		{rootFD, "dangling", true, "", ".git", nil},
		{rootFD, "dangling", false, "", "dangling", nil},
		{rootFD, "slash", true, "", ".", nil},
		{rootFD, "/", false, "", ".", nil},
		{rootFD, "a/./b/../b//", false, "a", "b", nil},
		{rootFD, "missing/x", false, "", "", unix.ENOENT},
		{rootFD, "", false, "", "", unix.ENOENT},
	}
	for _, tc := range tests {
		w := &walker{root: rootFD, self: selfIDs}
		r, err := w.walk(tc.start, tc.path, tc.follow)
		if !errors.Is(err, tc.err) || (tc.err != nil && err == nil) {
			t.Errorf("walk(%q, follow %v): error %v, want %v", tc.path, tc.follow, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		if got, want := fdPath(r.dir), filepath.Join(root, tc.dir); got != want || r.name != tc.name {
			t.Errorf("walk(%q, follow %v) = %s, %q; want %s, %q", tc.path, tc.follow, got, r.name, want, tc.name)
		}
		r.close()
	}
}

// A walk hands back the descriptor it started from (a one-name relative
// path, "/x") without closing it for its caller, and leaves no descriptor of
// its own open once its result is closed, whatever the path and outcome.
func TestWalkKeepsItsStartAndLeaksNothing(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"abs": "/a", "rel": "a/b", "loop": "loop"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "a/7"), nil, 0o644); err != nil { // a name /proc treats apart
		t.Fatal(err)
	}
	rootFD := openPath(t, root)
	start := openPath(t, filepath.Join(root, "a"))
	openFDs := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	before := openFDs()
	for _, path := range []string{"new", "b", "7", "/new", "/a", "abs", "/abs/b/x", "rel", "loop", "../rel/x", ".", "..", "missing/x", "b/"} {
		for _, follow := range []bool{false, true} {
			w := &walker{root: rootFD, self: selfIDs}
			if r, err := w.walk(start, path, follow); err == nil {
				r.close()
			}
		}
	}
	if after := openFDs(); after != before {
		t.Errorf("%d descriptors open after the walks, %d before", after, before)
	}
	for _, fd := range []int{rootFD, start} {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			t.Errorf("descriptor %d the walks started from: %v", fd, err)
		}
	}
}

// In /proc, "self" is the task, not the warden; a process's fd/N leads to
// the file it holds, but only for the task's own PID directory.
func TestWalkProc(t *testing.T) {
	rootFD := openPath(t, "/")
	f, err := os.CreateTemp(t.TempDir(), "held")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := &walker{root: rootFD, self: selfIDs}
	r, err := w.walk(rootFD, fmt.Sprintf("/proc/self/fd/%d", f.Fd()), true)
	if err != nil {
		t.Fatalf("walk of /proc/self/fd: %v", err)
	}
	if r.file < 0 || fdPath(r.file) != f.Name() {
		t.Errorf("/proc/self/fd/%d led to %q (dir %d), want the file %s", f.Fd(), fdPath(r.file), r.dir, f.Name())
	}
	r.close()

	// The task's own PID directory by number: its fd/N leads to the file.
	r, err = w.walk(rootFD, fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd()), true)
	if err != nil || r.file < 0 || fdPath(r.file) != f.Name() {
		t.Errorf("/proc/%d/fd/%d led to %q (%v), want the file %s", os.Getpid(), f.Fd(), fdPath(r.file), err, f.Name())
	}
	r.close()

	r, err = w.walk(rootFD, "/proc/mounts", true)
	if err != nil || fdPath(r.dir) != fmt.Sprintf("/proc/%d", os.Getpid()) || r.name != "mounts" {
		t.Errorf("/proc/mounts led to %s, %q (%v); want /proc/%d, mounts", fdPath(r.dir), r.name, err, os.Getpid())
	}
	r.close()

	// Another process's descriptor: the warden could open it, the task not.
	w = &walker{root: rootFD, self: func() (string, string, error) { return "999999999", "999999999", nil }}
	if _, err := w.walk(rootFD, fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), f.Fd()), true); !errors.Is(err, unix.EACCES) {
		t.Errorf("another process's fd: error %v, want EACCES", err)
	}
	// Nor another process's files, however the walk gets there: by name,
	// from a descriptor of its directory.
	procDir := openPath(t, fmt.Sprintf("/proc/%d", os.Getpid()))
	for _, tc := range []struct {
		start int
		path  string
	}{
		{rootFD, fmt.Sprintf("/proc/%d/mem", os.Getpid())},
		{rootFD, fmt.Sprintf("/proc/%d/task/%d/mem", os.Getpid(), unix.Gettid())},
		{procDir, "mem"},
		{procDir, "attr/current"},
	} {
		if _, err := w.walk(tc.start, tc.path, true); !errors.Is(err, unix.EACCES) {
			t.Errorf("%s of another process: error %v, want EACCES", tc.path, err)
		}
	}
	w = &walker{root: rootFD, self: selfIDs}
	if r, err := w.walk(procDir, "mem", true); err != nil {
		t.Errorf("the task's own mem: %v", err)
	} else {
		r.close()
	}
}

func TestParseStatus(t *testing.T) {
	st, err := parseStatus([]byte("Name:\tsh\nUmask:\t0027\nTgid:\t40\nNStgid:\t40\t2\nPid:\t41\nNSpid:\t41\t3\nThreads:\t5\n"))
	if err != nil || st.umask != 0o027 || st.tgid != "2" || st.tid != "3" || st.outerTgid != 40 || st.threads != 5 {
		t.Errorf("parseStatus = %+v, %v; want umask 027, tgid 2 (40 outside), tid 3, 5 threads", st, err)
	}
	if _, err := parseStatus([]byte("Umask:\t0027\nTgid:\t40\nNStgid:\t40\t2\nNSpid:\t41\t3\n")); err == nil {
		t.Error("a status without Threads parsed")
	}
	if _, err := parseStatus([]byte("Name:\tsh\nNStgid:\t40\n")); err == nil {
		t.Error("a status without Umask parsed")
	}
}

// A thread's own status, read as the warden reads a task's.
func TestReadStatus(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old := unix.Umask(0o027)
	defer unix.Umask(old)
	st, err := (&task{tid: unix.Gettid()}).readStatus(true)
	if err != nil {
		t.Fatal(err)
	}
	if st.umask != 0o027 || st.tgid != strconv.Itoa(os.Getpid()) || st.tid != strconv.Itoa(unix.Gettid()) {
		t.Errorf("readStatus = %+v; want umask 027, tgid %d, tid %d", st, os.Getpid(), unix.Gettid())
	}
}

func TestRefuse(t *testing.T) {
	ws, private := t.TempDir(), t.TempDir()
	gitdir := filepath.Join(ws, "gitdir")
	if err := os.Mkdir(gitdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var pst unix.Stat_t
	if err := unix.Stat(private, &pst); err != nil {
		t.Fatal(err)
	}
	w, err := New(-1, Rules{Rules: namerule.Rules{
		Outside: []namerule.Outside{{Name: ".git", Why: "outside"}},
		Dirs:    []namerule.InDir{{Dir: gitdir, Names: []string{"config.worktree"}, Why: "git reads it"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	wsFD, gitFD := openPath(t, ws), openPath(t, gitdir)
	for _, tc := range []struct {
		dir        int
		name, want string
		errno      unix.Errno
	}{
		{wsFD, ".git", "outside", unix.EPERM},
		{wsFD, ".GiT", "outside", unix.EPERM},
		{wsFD, ".gitx", "", 0},
		{wsFD, "config.worktree", "", 0},
		{gitFD, "config.worktree", "git reads it", unix.EROFS},
		{gitFD, "Config.worktree", "git reads it", unix.EROFS},
		{gitFD, "CONFIG~1.WOR", "git reads it", unix.EROFS},
		{gitFD, "config.worktre", "", 0},
	} {
		if got, errno := w.refuse(tc.dir, tc.name, false); got != tc.want || errno != tc.errno {
			t.Errorf("refuse(%s, %q) = %q, %v; want %q, %v", fdPath(tc.dir), tc.name, got, errno, tc.want, tc.errno)
		}
	}
	// The sandbox's own file systems may hold any outside name.
	w.private[pst.Dev] = true
	privFD := openPath(t, private)
	if got, errno := w.refuse(privFD, ".git", false); got != "" || errno != 0 {
		t.Errorf("refuse on a private file system = %q, %v; want nothing", got, errno)
	}
	// A path rule: on the way to its path only an empty directory may be
	// made; at and below it nothing.
	w.private = map[uint64]bool{}
	settings := filepath.Join(ws, ".claude/settings.json")
	w.paths = []pathRule{{namerule.Path{Path: settings, Why: "settings"}, pathKeys(settings)}}
	for _, tc := range []struct {
		name     string
		emptyDir bool
		errno    unix.Errno
	}{
		{".claude", true, 0},
		{".claude", false, unix.EROFS},
		{".CLAUDE", false, unix.EROFS},
		{"CLAUDE~1", false, unix.EROFS},
		{".Claude", true, 0},
		{".claudex", false, 0},
	} {
		if _, errno := w.refuse(wsFD, tc.name, tc.emptyDir); errno != tc.errno {
			t.Errorf("refuse(%q, emptyDir %v) = %v, want %v", tc.name, tc.emptyDir, errno, tc.errno)
		}
	}
	if err := os.Mkdir(filepath.Join(ws, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	claudeFD := openPath(t, filepath.Join(ws, ".claude"))
	for _, name := range []string{"settings.json", "Settings.json", "SETTINGS.JSON."} {
		if _, errno := w.refuse(claudeFD, name, true); errno != unix.EROFS {
			t.Errorf("refuse(.claude/%s) = %v, want EROFS", name, errno)
		}
	}
	if _, errno := w.refuse(claudeFD, "commands", true); errno != 0 {
		t.Errorf("refuse(.claude/commands) = %v, want nothing", errno)
	}
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.inNamed = map[string]map[string]string{".git": {"commondir": "git"}}
	for _, name := range []string{"commondir", "COMMONDIR", "CommonDir", "COMMON~1", "commondir."} {
		if _, errno := w.refuse(openPath(t, filepath.Join(ws, ".git")), name, false); errno != unix.EROFS {
			t.Errorf("refuse(.git/%s) of a .git made since = %v, want EROFS", name, errno)
		}
	}
	// A directory named .git in another case is one on a file system
	// that folds case.
	if err := os.Mkdir(filepath.Join(ws, ".GIT"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errno := w.refuse(openPath(t, filepath.Join(ws, ".GIT")), "COMMONDIR", false); errno != unix.EROFS {
		t.Errorf("refuse(.GIT/COMMONDIR) = %v, want EROFS", errno)
	}
	if _, err := New(-1, Rules{Rules: namerule.Rules{Dirs: []namerule.InDir{{Dir: filepath.Join(ws, "missing")}}}}); err == nil {
		t.Error("a rule for a missing directory was accepted")
	}
}

// Path rules that share the first components of their paths (every
// protected path in the workspace starts with the workspace's) part where
// their paths do: each path is refused by the rule whose path it is at or
// below, and only leads to the rules whose paths lie below it.
func TestPathRulesPart(t *testing.T) {
	w := &Warden{}
	for _, p := range []string{"/ws/a/b/x", "/ws/a/c/y", "/ws/a/b/z/w"} {
		w.paths = append(w.paths, pathRule{namerule.Path{Path: p, Why: p}, pathKeys(p)})
	}
	for _, tc := range []struct {
		path, why string
		onTheWay  bool
	}{
		{"/ws/a/b/x", "/ws/a/b/x", false},
		{"/ws/a/b/x/below", "/ws/a/b/x", false},
		{"/ws/A/C/Y", "/ws/a/c/y", false},
		{"/ws/a/b/z/w", "/ws/a/b/z/w", false},
		{"/ws/a/b/z", "/ws/a/b/z/w", true},
		{"/ws/a/b", "/ws/a/b/x", true},
		{"/ws/a/c", "/ws/a/c/y", true},
		{"/ws/a", "/ws/a/b/x", true},
		{"/ws/a/d", "", false},
		{"/ws/a/c/x", "", false},
		{"/ws/a/b/y", "", false},
		{"/other/a/b/x", "", false},
	} {
		if why, onTheWay := w.underPathRule(tc.path); why != tc.why || onTheWay != tc.onTheWay {
			t.Errorf("underPathRule(%s) = %q, %v; want %q, %v", tc.path, why, onTheWay, tc.why, tc.onTheWay)
		}
	}
}

// A path is read from the task's memory up to its NUL, across pages, and
// never from a page past it: in three readable pages followed by one the
// task cannot read (this test's own memory, read as a task's).
func TestTaskString(t *testing.T) {
	page := os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 4*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if err := unix.Mprotect(mem[3*page:], unix.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	self := &task{tid: unix.Gettid()}
	// put writes s with its NUL (if nul) to end at offset end of mem, and
	// returns its address.
	put := func(s string, end int, nul bool) uint64 {
		if nul {
			s += "\x00"
		}
		copy(mem[end-len(s):], s)
		return uint64(uintptr(unsafe.Pointer(&mem[end-len(s)])))
	}
	long := strings.Repeat("d/", 400) // longer than a first read
	for _, tc := range []struct {
		name    string
		path    string
		end     int
		nul     bool
		wantErr error
	}{
		{"short", "a/b", 100, true, nil},
		{"longer than the first read", long, 2000, true, nil},
		{"its NUL the page's last byte", "at/the/end", page, true, nil},
		{"across two pages", long, page + 300, true, nil},
		{"no NUL before an unreadable page", "unended", 3 * page, false, unix.EFAULT},
		{"no NUL in PATH_MAX bytes", strings.Repeat("x", unix.PathMax+10), 3 * page, false, unix.ENAMETOOLONG},
	} {
		clear(mem[:3*page])
		got, err := self.string(put(tc.path, tc.end, tc.nul))
		switch {
		case tc.wantErr != nil && err != tc.wantErr:
			t.Errorf("%s: %q, %v; want %v", tc.name, got, err, tc.wantErr)
		case tc.wantErr == nil && (err != nil || got != tc.path):
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.path)
		}
	}
	if _, err := self.string(0); err != unix.EFAULT {
		t.Errorf("a null pointer: %v; want EFAULT", err)
	}
}

// What reading a short path from a task's memory costs (allocations).
//
//	go test -run '^$' -bench TaskString ./warden/
func BenchmarkTaskString(b *testing.B) {
	path := append([]byte("/work/proj/src/pkg/file.go"), 0)
	self := &task{tid: unix.Gettid()}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := self.string(uint64(uintptr(unsafe.Pointer(&path[0])))); err != nil {
			b.Fatal(err)
		}
	}
}
