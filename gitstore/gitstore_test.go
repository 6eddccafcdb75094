package gitstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"golang.org/x/sys/unix"
)

// stored makes, in a new store, a repository as a session would leave it
// (made by git, with a commit) and a working tree whose .git links to it;
// change alters the stored git directory first.
func stored(t *testing.T, format string, change func(gitDir string)) (store, dir, entry string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	root := t.TempDir()
	store, dir = filepath.Join(root, "store"), filepath.Join(root, "ws", "made")
	entry = filepath.Join(store, "made-0123456789abcdef")
	for _, d := range []string{store, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"init", "-q", "--separate-git-dir=" + entry}
	if format != "" {
		args = append(args, "--object-format="+format)
	}
	runGit(t, dir, append(args, dir)...)
	runGit(t, dir, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "inside")
	runGit(t, dir, "config", "core.fsmonitor", "touch "+filepath.Join(root, "ran")+"; false")
	runGit(t, dir, "remote", "add", "origin", "https://example.com/x.git")
	if err := os.Remove(filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(layout.InsideGitStore+"/made-0123456789abcdef", filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(entry)
	}
	return store, dir, entry
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestAdoptCarriesDataOnly(t *testing.T) {
	for _, format := range []string{"", "sha256"} {
		t.Run("format="+format, func(t *testing.T) {
			store, dir, entry := stored(t, format, func(g string) {
				os.Symlink("/etc/passwd", filepath.Join(g, "objects", "planted-link"))
				os.WriteFile(filepath.Join(g, "objects", "info", "alternates"), []byte("/elsewhere/objects\n"), 0o644)
			})
			a, err := Adopt(Store{Dir: store}, dir)
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(filepath.Join(dir, ".git")); err != nil || !fi.IsDir() {
				t.Fatalf("%s/.git is not a directory now: %v", dir, err)
			}
			if _, err := os.Lstat(entry); !os.IsNotExist(err) {
				t.Errorf("the store's entry is still there: %v", err)
			}
			if got := runGit(t, dir, "log", "--format=%s"); got != "inside" {
				t.Errorf("log = %q, want the commit made inside", got)
			}
			cfg := exec.Command("git", "config", "--file", filepath.Join(dir, ".git", "config"), "--get-regexp", "core.fsmonitor|remote")
			if out, err := cfg.CombinedOutput(); len(out) > 0 || err == nil {
				t.Errorf("carried configuration: %q (%v)", out, err)
			}
			if format != "" {
				if got := runGit(t, dir, "rev-parse", "--show-object-format"); got != format {
					t.Errorf("object format %q, want %q", got, format)
				}
			}
			want := []string{"objects/info/alternates", "objects/planted-link"}
			if strings.Join(a.Skipped, " ") != strings.Join(want, " ") || len(a.Remotes) != 1 || a.Refs != 1 {
				t.Errorf("adoption = %+v, want skipped %q, one remote, one ref", a, want)
			}
		})
	}
}

// A stored repository adopt cannot vouch for is refused, and nothing
// changes: the link, the store's entry, no directory left behind.
func TestAdoptRefusesAndChangesNothing(t *testing.T) {
	cases := []struct {
		name   string
		change func(g string)
		want   string
	}{
		{"a ref that is not one", func(g string) {
			os.WriteFile(filepath.Join(g, "refs", "heads", "evil"), []byte("[core]\n\tfsmonitor = x\n"), 0o644)
		}, "refs/heads/evil is not a ref"},
		{"a HEAD that names no ref", func(g string) { os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: ../../config\n"), 0o644) }, "HEAD does not name a ref"},
		{"packed refs that are not", func(g string) { os.WriteFile(filepath.Join(g, "packed-refs"), []byte("[include]\n"), 0o644) }, "packed-refs:1: not a packed ref"},
		{"a linked worktree's git directory", func(g string) { os.WriteFile(filepath.Join(g, "commondir"), []byte("../..\n"), 0o644) }, "linked worktree"},
		{"reftable", func(g string) {
			f, _ := os.OpenFile(filepath.Join(g, "config"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("[extensions]\n\trefStorage = reftable\n")
			f.Close()
		}, `keeps its refs in "reftable"`},
		{"a git file", func(g string) {
			os.RemoveAll(g)
			os.WriteFile(g, []byte("gitdir: /ws/elsewhere\n"), 0o644)
		}, "is not a git directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store, dir, entry := stored(t, "", c.change)
			before, _ := os.ReadDir(dir)
			_, err := Adopt(Store{Dir: store}, dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Adopt: %v, want an error with %q", err, c.want)
			}
			if _, ok := lstatLink(filepath.Join(dir, ".git")); !ok {
				t.Error("the .git link is gone")
			}
			if _, err := os.Lstat(entry); err != nil {
				t.Errorf("the store's entry is gone: %v", err)
			}
			if after, _ := os.ReadDir(dir); len(after) != len(before) {
				t.Errorf("%s had %d entries, now %d", dir, len(before), len(after))
			}
		})
	}
}

func TestAdoptRefusesWhatIsNoStoreLink(t *testing.T) {
	store, dir, _ := stored(t, "", nil)
	for _, target := range []string{"/elsewhere/made", layout.InsideGitStore + "/../etc", layout.InsideGitStore + "/a/b"} {
		os.Remove(filepath.Join(dir, ".git"))
		os.Symlink(target, filepath.Join(dir, ".git"))
		if _, err := Adopt(Store{Dir: store}, dir); err == nil || !strings.Contains(err.Error(), "is not a link into the git store") {
			t.Errorf("a link to %s: %v, want refused", target, err)
		}
	}
}

func lstatLink(p string) (os.FileInfo, bool) {
	fi, err := os.Lstat(p)
	return fi, err == nil && fi.Mode()&os.ModeSymlink != 0
}

// A link a session left in the store where adopt reads a file leads to no
// file of the user's: it is refused, and nothing changes.
func TestAdoptReadsNoLink(t *testing.T) {
	for _, name := range []string{"HEAD", "config", "packed-refs"} {
		t.Run(name, func(t *testing.T) {
			secret := filepath.Join(t.TempDir(), "secret")
			os.WriteFile(secret, []byte("ref: refs/heads/main\n"), 0o600)
			store, dir, entry := stored(t, "", func(g string) {
				os.Remove(filepath.Join(g, name))
				os.Symlink(secret, filepath.Join(g, name))
			})
			if _, err := Adopt(Store{Dir: store}, dir); err == nil || !strings.Contains(err.Error(), "is not a plain file") {
				t.Fatalf("Adopt: %v, want a link refused", err)
			}
			if _, err := os.Lstat(entry); err != nil {
				t.Errorf("the store's entry is gone: %v", err)
			}
		})
	}
}

// submodule makes a store as a session leaves a submodule initialised
// inside: ws/sub/.git a link to a "gitdir:" file in the store's git/,
// whose line is gitdir, and the store's modules/ prepared by setup. It
// returns the store and the submodule's working tree.
func submodule(t *testing.T, gitdir string, setup func(modules string)) (Store, string) {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	store := Store{Dir: filepath.Join(root, "store", "git"), Binds: map[string]string{filepath.Join(ws, ".git", "modules"): filepath.Join(root, "store", "modules")}}
	dir := filepath.Join(ws, "sub")
	file := filepath.Join(store.Dir, "sub-0123456789abcdef", "d", ".git")
	for _, d := range []string{dir, filepath.Dir(file), filepath.Join(ws, ".git"), filepath.Join(root, "store", "modules")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, []byte("gitdir: "+gitdir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(layout.InsideGitStore+"/sub-0123456789abcdef/d/.git", filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	setup(filepath.Join(root, "store", "modules"))
	return store, dir
}

// outsideRepo makes a git directory outside the store, as a user's own
// repository would be, and returns it.
func outsideRepo(t *testing.T, parent string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(parent, "y")
	runGit(t, parent, "init", "-q", "--bare", repo)
	return repo
}

// What a session lays in the store (a "gitdir:" file naming a path through
// a link, a link for a git directory or an entry) makes adopt read, copy
// and remove nothing outside the store: it is refused, and the user's
// directory it leads to is whole.
func TestAdoptFollowsOnlyTheStore(t *testing.T) {
	cases := []struct {
		name   string
		gitdir string
		lay    func(t *testing.T, modules, outside string)
	}{
		{"a module's directory a link outside", "../.git/modules/x/y", func(t *testing.T, modules, outside string) {
			os.Symlink(outside, filepath.Join(modules, "x"))
		}},
		{"a module a link to a repository outside", "../.git/modules/x", func(t *testing.T, modules, outside string) {
			os.Symlink(filepath.Join(outside, "y"), filepath.Join(modules, "x"))
		}},
		{"the entry a link outside", "../.git/modules/x", func(t *testing.T, modules, outside string) {
			store := filepath.Join(filepath.Dir(modules), "git")
			os.MkdirAll(filepath.Join(outside, "d"), 0o755)
			os.WriteFile(filepath.Join(outside, "d", ".git"), []byte("gitdir: ../.git/modules/x\n"), 0o644)
			os.RemoveAll(filepath.Join(store, "sub-0123456789abcdef"))
			os.Symlink(outside, filepath.Join(store, "sub-0123456789abcdef"))
			runGit(t, modules, "init", "-q", "--bare", filepath.Join(modules, "x"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outside := filepath.Join(t.TempDir(), "user")
			repo := outsideRepo(t, outside)
			store, dir := submodule(t, c.gitdir, func(modules string) { c.lay(t, modules, outside) })
			_, err := Adopt(store, dir)
			if err == nil || !strings.Contains(err.Error(), "not followed") && !strings.Contains(err.Error(), "is not a plain file") {
				t.Errorf("Adopt: %v, want refused: a link is not followed", err)
			}
			if _, err := os.Stat(filepath.Join(repo, "HEAD")); err != nil {
				t.Errorf("the repository outside the store was removed: %v", err)
			}
			if _, err := os.Lstat(filepath.Join(filepath.Dir(dir), ".git", "modules", "x")); err == nil {
				t.Error("adopt made a git directory from what is outside the store")
			}
			if _, ok := lstatLink(filepath.Join(dir, ".git")); !ok {
				t.Error("the .git link is gone")
			}
		})
	}
}

// A gitdir: file whose path climbs out of the workspace's modules/ names
// no submodule in the store.
func TestAdoptRefusesAGitdirOutOfModules(t *testing.T) {
	for _, gitdir := range []string{"../../../etc", "/etc", "../.git/modules/../../x", "../.git/modules"} {
		store, dir := submodule(t, gitdir, func(string) {})
		if _, err := Adopt(store, dir); err == nil || !strings.Contains(err.Error(), "no submodule's git directory in the store") {
			t.Errorf("gitdir: %s: %v, want refused", gitdir, err)
		}
	}
}

// A link in the stored git directory, at its top or on the way to a file
// adopt copies, is not followed: the data outside is not carried.
func TestAdoptCopiesNothingThroughALink(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "user")
	os.MkdirAll(filepath.Join(outside, "heads"), 0o755)
	os.WriteFile(filepath.Join(outside, "heads", "secret"), []byte("0123456789012345678901234567890123456789\n"), 0o600)
	os.WriteFile(filepath.Join(outside, "index"), []byte("outside\n"), 0o600)
	store, dir, _ := stored(t, "", func(g string) {
		os.Symlink(outside, filepath.Join(g, "refs", "planted"))
		os.Symlink(filepath.Join(outside, "index"), filepath.Join(g, "logs", "planted"))
	})
	a, err := Adopt(Store{Dir: store}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".git", "refs", "planted")); err == nil {
		t.Error("carried a link's target")
	}
	if want := "refs/planted logs/planted"; strings.Join(a.Skipped, " ") != want {
		t.Errorf("skipped %q, want %q", a.Skipped, want)
	}
}

// A HEAD that is a pipe is no plain file: adopt says so, where opening it
// to read would wait for a writer for ever.
func TestAdoptReadsNoPipe(t *testing.T) {
	store, dir, entry := stored(t, "", func(g string) {
		os.Remove(filepath.Join(g, "HEAD"))
		if err := unix.Mkfifo(filepath.Join(g, "HEAD"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := Adopt(Store{Dir: store}, dir); err == nil || !strings.Contains(err.Error(), "is not a plain file") {
		t.Fatalf("Adopt: %v, want a pipe refused", err)
	}
	if _, err := os.Lstat(entry); err != nil {
		t.Errorf("the store's entry is gone: %v", err)
	}
}

// A working tree named through a link a session could have made is not
// followed: adopt names the link and changes nothing.
func TestAdoptFollowsNoLinkToTheWorkingTree(t *testing.T) {
	store, dir, entry := stored(t, "", nil)
	via := filepath.Join(filepath.Dir(dir), "via")
	if err := os.Symlink(dir, via); err != nil {
		t.Fatal(err)
	}
	if _, err := Adopt(Store{Dir: store}, via); err == nil || !strings.Contains(err.Error(), "a link is not followed") {
		t.Fatalf("Adopt: %v, want the link refused", err)
	}
	if _, ok := lstatLink(filepath.Join(dir, ".git")); !ok {
		t.Error("the .git link is gone")
	}
	if _, err := os.Lstat(entry); err != nil {
		t.Errorf("the store's entry is gone: %v", err)
	}
}

// A FIFO a session left in the store where adopt reads a file is refused
// at once: it does not block the open.
func TestAdoptWaitsOnNoFIFO(t *testing.T) {
	for _, name := range []string{"HEAD", "config", "packed-refs"} {
		t.Run(name, func(t *testing.T) {
			store, dir, _ := stored(t, "", func(g string) {
				os.Remove(filepath.Join(g, name))
				if err := unix.Mkfifo(filepath.Join(g, name), 0o600); err != nil {
					t.Fatal(err)
				}
			})
			if _, err := Adopt(Store{Dir: store}, dir); err == nil || !strings.Contains(err.Error(), "is not a plain file") {
				t.Fatalf("Adopt: %v, want a FIFO refused", err)
			}
		})
	}
}
