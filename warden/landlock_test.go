package warden

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/mountinfo"
	"golang.org/x/sys/unix"
)

// The sandbox's mounts as bwrap makes them, trimmed: the root bound
// read-only (with the host's /dev, /dev/shm and /dev/pts beneath it, hidden
// under the sandbox's own /dev), bwrap's /dev with its device binds and
// devpts, /tmp, /run with the git store bound in, the home with ~/.claude
// bound writably, and the workspace.
const sandboxMounts = `1 0 8:1 / / ro,relatime - ext4 /dev/vda rw
2 1 0:5 / /dev ro,nosuid - devtmpfs udev rw
3 2 0:20 / /dev/shm ro - tmpfs tmpfs rw
4 2 0:21 / /dev/pts ro - devpts devpts rw
5 1 0:30 / /dev rw,nosuid,nodev - tmpfs tmpfs rw
6 5 0:5 /null /dev/null rw,nosuid - devtmpfs udev rw
7 5 0:5 /tty /dev/tty rw,nosuid - devtmpfs udev rw
8 5 0:31 / /dev/pts rw,nosuid,noexec - devpts devpts rw
9 1 0:32 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw
10 1 0:33 / /run rw,nosuid,nodev - tmpfs tmpfs rw
11 10 8:1 /state/git /run/claude-sandbox/git rw,relatime - ext4 /dev/vda rw
12 1 0:34 / /home/u rw,nosuid,nodev - tmpfs tmpfs rw
13 12 8:1 /home/u/.claude /home/u/.claude rw,relatime - ext4 /dev/vda rw
14 13 8:1 /home/u/.claude/settings.json /home/u/.claude/settings.json ro,relatime - ext4 /dev/vda rw
15 12 8:1 /usr/bin/claude /home/u/.local/bin/claude ro,relatime - ext4 /dev/vda rw
16 1 8:1 /workspaces/p /workspaces/p rw,relatime - ext4 /dev/vda rw
`

// devices are what the points of sandboxMounts are, as lstat finds them.
func devices(extra map[string]uint64) func(string) (unix.Stat_t, error) {
	chr := map[string]uint64{"/dev/null": unix.Mkdev(1, 3), "/dev/tty": unix.Mkdev(5, 0)}
	for k, v := range extra {
		chr[k] = v
	}
	return func(p string) (unix.Stat_t, error) {
		if dev, ok := chr[p]; ok {
			return unix.Stat_t{Mode: unix.S_IFCHR | 0o666, Rdev: dev}, nil
		}
		return unix.Stat_t{Mode: unix.S_IFDIR | 0o755}, nil
	}
}

func TestLockable(t *testing.T) {
	private := []string{"/dev", "/run", "/tmp", "/home/u"}
	for _, tc := range []struct {
		name    string
		mounts  string
		dir     string
		devices map[string]uint64
		why     string // "" when lockable, else a part of why not
	}{
		{name: "dev", mounts: sandboxMounts, dir: "/dev"},
		{name: "tmp", mounts: sandboxMounts, dir: "/tmp"},
		{name: "the git store beneath /run", mounts: sandboxMounts, dir: "/run", why: "/run/claude-sandbox/git is mounted beneath it writably"},
		{name: "~/.claude beneath the home", mounts: sandboxMounts, dir: "/home/u", why: "/home/u/.claude is mounted beneath it writably"},
		{name: "a workspace beneath /tmp", mounts: sandboxMounts + "17 9 8:1 /w /tmp/w rw - ext4 /dev/vda rw\n", dir: "/tmp", why: "/tmp/w is mounted beneath it writably"},
		{name: "a writable mount beneath a read-only one", mounts: sandboxMounts + "17 9 8:1 /w /tmp/w ro - ext4 /dev/vda rw\n18 17 8:1 /x /tmp/w/x rw - ext4 /dev/vda rw\n", dir: "/tmp", why: "/tmp/w/x is mounted beneath it writably"},
		{name: "a read-only mount beneath", mounts: sandboxMounts + "17 9 8:1 /w /tmp/w ro - ext4 /dev/vda rw\n", dir: "/tmp"},
		{name: "the console bound into /dev", mounts: sandboxMounts + "17 5 0:5 /console /dev/console rw - devtmpfs udev rw\n", dir: "/dev",
			devices: map[string]uint64{"/dev/console": unix.Mkdev(5, 1)}, why: "/dev/console is mounted beneath it writably"},
		{name: "a terminal bound as the console", mounts: sandboxMounts + "17 5 0:31 /3 /dev/console rw - devpts devpts rw\n", dir: "/dev",
			devices: map[string]uint64{"/dev/console": unix.Mkdev(136, 3)}},
		{name: "a writable tmpfs not the sandbox's own", mounts: sandboxMounts + "17 9 0:40 / /tmp/shm rw - tmpfs tmpfs rw\n", dir: "/tmp", why: "/tmp/shm is mounted beneath it writably"},
		{name: "one of its own beneath", mounts: sandboxMounts + "17 9 0:40 / /tmp/inner rw - tmpfs tmpfs rw\n", dir: "/tmp"},
		{name: "covered by a later mount", mounts: sandboxMounts + "17 1 8:1 /t /tmp rw - ext4 /dev/vda rw\n", dir: "/tmp", why: "its file system is ext4"},
		{name: "no mount", mounts: sandboxMounts, dir: "/srv", why: "not a mount point"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mounts, err := mountinfo.Parse(strings.NewReader(tc.mounts))
			if err != nil {
				t.Fatal(err)
			}
			priv := private
			if tc.name == "one of its own beneath" {
				priv = append(priv, "/tmp/inner")
			}
			got := lockable(mounts, priv, tc.dir, devices(tc.devices))
			if (tc.why == "") != (got == "") || !strings.Contains(got, tc.why) {
				t.Errorf("lockable(%s) = %q, want %q", tc.dir, got, tc.why)
			}
		})
	}
}

// TestLockedWithoutRules: no call goes on where a rule of the warden's
// applies on a locked file system, since the domain grants each one whole.
func TestLockedWithoutRules(t *testing.T) {
	w := &Warden{dirs: map[fileID]dirRule{{dev: 7, ino: 1}: {}}}
	if locked, why := w.lockedWithoutRules([]uint64{5, 6}); len(locked) != 2 || why != "" {
		t.Errorf("no rule on 5 or 6: locked %v, %q", locked, why)
	}
	for name, w := range map[string]*Warden{
		"a directory's names": {dirs: map[fileID]dirRule{{dev: 6, ino: 1}: {}}},
		"a copy":              {copies: map[fileID]copyThrough{{dev: 6, ino: 1}: {}}},
		"a git directory":     {gitDirs: map[fileID]gitDirRule{{dev: 6, ino: 1}: {}}},
	} {
		if locked, why := w.lockedWithoutRules([]uint64{5, 6}); len(locked) != 0 || !strings.Contains(why, "device 6") {
			t.Errorf("%s on 6: locked %v, %q", name, locked, why)
		}
	}
}

// TestFixedNames: only a device file bound directly in a locked file
// system, every leading directory a mount point, is a fixed name.
func TestFixedNames(t *testing.T) {
	mounts, err := mountinfo.Parse(strings.NewReader(sandboxMounts))
	if err != nil {
		t.Fatal(err)
	}
	locked := map[uint64]bool{unix.Mkdev(0, 30): true, unix.Mkdev(0, 32): true}
	stat := devices(map[string]uint64{"/srv/dev/null": unix.Mkdev(1, 3)})
	got := fixedNames(mounts, locked, stat)
	if !got["/dev/null"] || !got["/dev/tty"] || len(got) != 2 {
		t.Errorf("want /dev/null and /dev/tty, got %v", got)
	}
	linkOnly := func(string) (unix.Stat_t, error) { return unix.Stat_t{Mode: unix.S_IFLNK | 0o777}, nil }
	if got := fixedNames(mounts, locked, linkOnly); len(got) != 0 {
		t.Errorf("links are no device files: %v", got)
	}
	delete(locked, unix.Mkdev(0, 30))
	if got := fixedNames(mounts, locked, stat); len(got) != 0 {
		t.Errorf("fixed with /dev not locked: %v", got)
	}
	locked[unix.Mkdev(0, 30)] = true
	// bwrap's /dev is mounted on the host's /dev the root bind brought in:
	// stacked, every leading directory still a mount point.
	stacked := strings.ReplaceAll(sandboxMounts, "5 1 0:30 / /dev ", "5 2 0:30 / /dev ")
	if mounts, err = mountinfo.Parse(strings.NewReader(stacked)); err != nil {
		t.Fatal(err)
	}
	if got := fixedNames(mounts, locked, stat); !got["/dev/null"] {
		t.Errorf("/dev/null on a /dev stacked on the host's is not fixed: %v", got)
	}
	// A leading directory that is no mount point could be renamed: a
	// locked tmpfs at /srv/dev, /srv a directory of the root's.
	moved := strings.ReplaceAll(strings.ReplaceAll(sandboxMounts, " /dev/null ", " /srv/dev/null "), "5 1 0:30 / /dev ", "5 1 0:30 / /srv/dev ")
	if mounts, err = mountinfo.Parse(strings.NewReader(moved)); err != nil {
		t.Fatal(err)
	}
	if got := fixedNames(mounts, locked, stat); got["/srv/dev/null"] {
		t.Errorf("a device below a directory that is no mount point is fixed: %v", got)
	}
}

// TestFirstLook: a path's text leads to the mount seen below it, never to
// one another mount covers.
func TestFirstLook(t *testing.T) {
	mounts, err := mountinfo.Parse(strings.NewReader(sandboxMounts))
	if err != nil {
		t.Fatal(err)
	}
	w := &Warden{locked: map[uint64]bool{unix.Mkdev(0, 30): true, unix.Mkdev(0, 32): true},
		private:     map[uint64]bool{unix.Mkdev(0, 30): true, unix.Mkdev(0, 32): true, unix.Mkdev(0, 33): true, unix.Mkdev(0, 34): true},
		mountPoints: mountPointsOf(mounts), workspaceDev: unix.Mkdev(8, 1)}
	for path, want := range map[string]landing{
		"/dev/shm/x":                  landLocked, // the host's /dev/shm is covered by bwrap's /dev
		"/dev/pts/0":                  landShared,
		"/tmp/a/b":                    landLocked,
		"/tmpx/a":                     landWorkspace, // the root's, which the workspace shares here
		"/run/claude-sandbox/git/x":   landWorkspace,
		"/run/x":                      landPrivate,
		"/home/u/.cache/go-build/x":   landPrivate,
		"/home/u/.claude/projects/x":  landWorkspace,
		"/workspaces/p/node_modules/": landWorkspace,
	} {
		c := &fileCall{path: path, start: -1}
		if got := w.firstLook(c); got != want {
			t.Errorf("firstLook(%s) = %s, want %s", path, landingNames[got], landingNames[want])
		}
	}
}

// A thread scoped by ScopeAbstractSockets reaches the abstract socket it
// made itself, and not one made outside its domain (the control: before
// the scope, the same thread reaches that one).
func TestScopeAbstractSockets(t *testing.T) {
	if abi, why := Landlock(); abi < ScopeABI {
		t.Skipf("needs Landlock ABI %d: %s", ScopeABI, why)
	}
	outsideName := fmt.Sprintf("claude-sandbox-scope-outside-%d", os.Getpid())
	outside, err := listenAbstract(outsideName)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(outside)
	var before, scope, reachOutside, reachInside error
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The domain is the thread's: locked and never unlocked, the
		// thread ends with this goroutine, and no other runs in it.
		runtime.LockOSThread()
		before = connectAbstract(outsideName)
		if scope = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); scope == nil {
			scope = ScopeAbstractSockets()
		}
		if scope != nil {
			return
		}
		reachOutside = connectAbstract(outsideName)
		insideName := fmt.Sprintf("claude-sandbox-scope-inside-%d", os.Getpid())
		inside, err := listenAbstract(insideName)
		if err != nil {
			reachInside = err
			return
		}
		defer unix.Close(inside)
		reachInside = connectAbstract(insideName)
	}()
	<-done
	switch {
	case scope != nil:
		t.Fatal(scope)
	case before != nil:
		t.Fatalf("before the scope, the socket made outside: %v, want reached", before)
	case !errors.Is(reachOutside, unix.EPERM):
		t.Errorf("scoped, the socket made outside: %v, want EPERM", reachOutside)
	case reachInside != nil:
		t.Errorf("scoped, the socket made inside: %v, want reached", reachInside)
	}
}

// listenAbstract listens on the abstract unix socket name.
func listenAbstract(name string) (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err = unix.Bind(fd, &unix.SockaddrUnix{Name: "@" + name}); err == nil {
		err = unix.Listen(fd, 4)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// connectAbstract connects a new socket to the abstract name, on the
// calling thread, and closes it.
func connectAbstract(name string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrUnix{Name: "@" + name})
}

// TestNamesMovedAreCarriedOut: a rename, a link or a symlink is carried
// out by the warden wherever it lands, a locked file system too, while a
// mkdir there goes on (the control): the socket registry and the refusal
// of mount points keep step with the calls that move names (ADR 0040).
// Red if any of the three is let go on.
func TestNamesMovedAreCarriedOut(t *testing.T) {
	dir := t.TempDir()
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	root, err := unix.Open("/", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	w := &Warden{locked: map[uint64]bool{st.Dev: true}, private: map[uint64]bool{st.Dev: true}}
	for _, tc := range []struct {
		op   op
		goOn bool
	}{{opMkdir, true}, {opRename, false}, {opLink, false}, {opSymlink, false}} {
		start, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := &fileCall{req: request{op: tc.op}, path: "name", start: start, start2: -1}
		if on, _ := w.goesOn(c, &walker{root: root, self: func() (string, string, error) { return "1", "1", nil }}); on != tc.goOn {
			t.Errorf("op %d on a locked file system: goes on %v, want %v", tc.op, on, tc.goOn)
		}
		c.close()
	}
}
