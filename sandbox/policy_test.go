package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConf(t *testing.T) {
	in := `# comment
workspace-root = /work/proj
allow-write=/opt/cache
  pass-env = MY_VAR  
protect = secrets/
share-home = .gitconfig
append-path = /usr/local/go/bin
no-forge
`
	c, err := ParseConf("test.conf", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &Conf{
		WorkspaceRoot: "/work/proj",
		AllowWrite:    []Line{{"/opt/cache", 3}},
		PassEnv:       []Line{{"MY_VAR", 4}},
		Protect:       []Line{{"secrets/", 5}},
		ShareHome:     []Line{{".gitconfig", 6}},
		AppendPath:    []Line{{"/usr/local/go/bin", 7}},
		NoForge:       true,
		Source:        "test.conf",
	}
	if diff := cmp.Diff(want, c, cmp.AllowUnexported(Conf{}), cmp.FilterPath(func(p cmp.Path) bool {
		return p.Last().String() == ".seen" || p.Last().String() == ".workspaceLine"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("ParseConf mismatch (-want +got):\n%s", diff)
	}
}

func TestProtections(t *testing.T) {
	ws := t.TempDir()
	mkdir := func(p string) {
		if err := os.MkdirAll(filepath.Join(ws, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		if err := os.WriteFile(filepath.Join(ws, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkdir(".git/hooks")
	write(".git/config")
	mkdir("vendor/lib")
	write("worktree")
	paths := func(rels ...string) []protectedPath {
		var out []protectedPath
		for _, r := range rels {
			out = append(out, protectedPath{r, "test"})
		}
		return out
	}
	got, missing, err := protections([]string{ws}, relHolds(ws, paths(
		".git/hooks/", ".git/config", ".git/modules/", // existing, existing, missing under a pinned dir
		".vscode/", ".vscode/tasks.json", // a missing dir covers what is below it
		"vendor/lib/gen/", // a missing dir two levels below the workspace: both levels pinned
		"worktree/hooks/", // a file where a directory was expected: the file is protected
		"notes.txt",       // a missing file
	)))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range got {
		lines = append(lines, []string{"pin", "ro"}[m.kind]+" "+strings.TrimPrefix(m.path, ws+"/"))
	}
	for _, m := range missing {
		if m.dir == "" {
			lines = append(lines, "path "+strings.TrimPrefix(m.path, ws+"/"))
			continue
		}
		lines = append(lines, "name "+strings.TrimPrefix(strings.TrimPrefix(m.dir, ws), "/")+":"+m.name)
	}
	// Existing paths are read-only and their names refused (a program
	// outside that replaces one dissolves its mount); a missing path's name
	// is refused, and a path below a missing directory is a path rule only
	// (the directory may be made, empty).
	want := []string{
		"pin .git",
		"pin vendor",
		"ro worktree",
		"ro .git/config",
		"ro .git/hooks",
		"pin vendor/lib",
		"name .git:hooks",
		"name .git:config",
		"name .git:modules",
		"name :.vscode",
		"path .vscode/tasks.json",
		"name vendor/lib:gen",
		"name :worktree",
		"name :notes.txt",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("protections mismatch (-want +got):\n%s", diff)
	}

	if err := os.Symlink("/etc", filepath.Join(ws, ".idea")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := protections([]string{ws}, relHolds(ws, paths(".idea/"))); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("a symlinked protected path gave %v, want a refusal", err)
	}
}

func TestWriteCheck(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"home/.ssh", "home/go/pkg/mod", "proj/.git", "proj2", "cache", "other/.cargo", "repo/.git", "repo/build", "venv/lib", "tools/bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"home/.bashrc", "venv/pyvenv.cfg"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home, ws := filepath.Join(root, "home"), filepath.Join(root, "proj")
	w := &writeCheck{ws: ws, home: home, passwdHomes: []string{filepath.Join(root, "other"), "/", "/bin", "/nonexistent"}, protect: defaultProtect,
		path: []string{filepath.Join(root, "tools/bin")}, product: map[string]string{"/etc/claude-sandbox.conf": "the conf"}}
	tests := []struct {
		path           string
		ok, executable bool // accepted by allow-write, by allow-write-executable
	}{
		{filepath.Join(root, "cache"), true, true},
		{filepath.Join(root, "proj2"), true, true}, // a sibling whose name starts with the workspace's
		{filepath.Join(root, "proj"), false, false},
		{filepath.Join(root, "proj/.git"), false, false},
		{root, false, false},
		{home, false, false},
		{filepath.Join(home, ".ssh"), false, false},
		{filepath.Join(home, ".bashrc"), false, false},
		{filepath.Join(home, "go/pkg/mod"), false, true},
		{filepath.Join(root, "other"), false, false},
		{filepath.Join(root, "other/.cargo"), false, true},
		{filepath.Join(root, "repo/build"), false, true},
		{filepath.Join(root, "venv/lib"), false, true},
		{filepath.Join(root, "tools"), false, true},
		{"/etc", false, false},
		{"/usr/local", false, false},
		{"/", false, false},
	}
	for _, tt := range tests {
		for _, executable := range []bool{false, true} {
			want := tt.ok
			if executable {
				want = tt.executable
			}
			if _, err := w.check(tt.path, executable); (err == nil) != want {
				t.Errorf("check(%s, executable=%v) = %v, want ok=%v", tt.path, executable, err, want)
			}
		}
	}
}

// Homes and the roots of software outside them feed code out by their
// place alone, whether or not they exist here.
func TestFeedsCodeOut(t *testing.T) {
	w := &writeCheck{ws: "/w/proj", home: "/u/me", passwdHomes: []string{"/srv/jenkins", "/u/me"}}
	tests := []struct{ path, want string }{
		{"/u/me/.cargo/registry", "is in your home /u/me,"},
		{"/srv/jenkins/.m2", "is in the home /srv/jenkins,"},
		{"/home/bob/.npm", "is in the home /home/bob,"},
		{"/root/.cache/pip", "is in the home /root,"},
		{"/opt/venv", "is in /opt,"},
		{"/go/pkg/mod", "is in /go,"},
		{"/var/cache/ccache", "is in /var/cache,"},
		{"/nix/store", "is in /nix,"},
		{"/snap/bin", "is in /snap,"},
		{"/srv/scratch-claude-sandbox-test", ""},
	}
	for _, tt := range tests {
		got := w.feedsCodeOut(tt.path)
		if (tt.want == "") != (got == "") || !strings.HasPrefix(got, tt.want) {
			t.Errorf("feedsCodeOut(%s) = %q, want it to start with %q", tt.path, got, tt.want)
		}
	}
}
