package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWithin(t *testing.T) {
	tests := []struct {
		dir, p string
		want   bool
	}{
		{"/work/proj", "/work/proj", true},
		{"/work/proj", "/work/proj/.git", true},
		{"/work/proj", "/work/proj2", false},
		{"/work/proj", "/work", false},
		{"/", "/anything", true},
		{"/work/proj/.git", "/work/proj/.gitignore", false},
	}
	for _, tt := range tests {
		if got := within(tt.dir, tt.p); got != tt.want {
			t.Errorf("within(%q, %q) = %v, want %v", tt.dir, tt.p, got, tt.want)
		}
	}
}

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
	got, err := protections(ws, []string{
		".git/hooks/", ".git/config", ".git/modules/", // existing, existing, missing under a pinned dir
		".vscode/", ".vscode/tasks.json", // a missing dir covers what is below it
		"vendor/lib/gen/",                                      // a missing dir two levels below the workspace: both levels pinned
		"worktree/hooks/",                                      // a file where a directory was expected: the file is protected
		"notes.txt",                                            // a missing file: held by a directory
		".git/commondir",                                       // a missing file git reads: held by a file
		".claude/settings.json", ".claude/settings.local.json", // a missing .claude is made; Claude Code's settings are held by files
	})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range got {
		lines = append(lines, []string{"pin", "ro", "stub-dir", "stub-file", "made"}[m.kind]+" "+strings.TrimPrefix(m.path, ws+"/"))
	}
	want := []string{
		"made .claude",
		"pin .git",
		"stub-dir .vscode",
		"stub-dir notes.txt",
		"pin vendor",
		"ro worktree",
		"stub-file .claude/settings.json",
		"stub-file .claude/settings.local.json",
		"stub-file .git/commondir",
		"ro .git/config",
		"ro .git/hooks",
		"stub-dir .git/modules",
		"pin vendor/lib",
		"stub-dir vendor/lib/gen",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("protections mismatch (-want +got):\n%s", diff)
	}

	if err := os.Symlink("/etc", filepath.Join(ws, ".idea")); err != nil {
		t.Fatal(err)
	}
	if _, err := protections(ws, []string{".idea/"}); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("a symlinked protected path gave %v, want a refusal", err)
	}
}

func TestCheckAllowWrite(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"home/.ssh", "proj/.git", "proj2", "cache"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home, ws := filepath.Join(root, "home"), filepath.Join(root, "proj")
	product := map[string]string{"/etc/claude-sandbox.conf": "the conf"}
	tests := []struct {
		path string
		ok   bool
	}{
		{filepath.Join(root, "cache"), true},
		{filepath.Join(root, "proj2"), true}, // a sibling whose name starts with the workspace's
		{filepath.Join(root, "proj"), false},
		{filepath.Join(root, "proj/.git"), false},
		{root, false},
		{home, false},
		{filepath.Join(home, ".ssh"), false},
		{"/etc", false},
		{"/usr/local", false},
		{"/", false},
	}
	for _, tt := range tests {
		_, err := checkAllowWrite(tt.path, ws, home, DefaultProtect, product)
		if (err == nil) != tt.ok {
			t.Errorf("checkAllowWrite(%s) = %v, want ok=%v", tt.path, err, tt.ok)
		}
	}
}

func TestStubContent(t *testing.T) {
	for path, want := range map[string]string{
		"/w/.git/commondir":              ".\n",
		"/w/.claude/settings.json":       "{}\n",
		"/w/.claude/settings.local.json": "{}\n",
		"/w/settings.json":               "",
		"/w/.mcp.json":                   "",
		"/w/.envrc":                      "",
	} {
		if got := StubContent(path); got != want {
			t.Errorf("StubContent(%s) = %q, want %q", path, got, want)
		}
	}
}

func TestShellWords(t *testing.T) {
	got := shellWords(`bash ~/.claude/a.sh|jq -r '.x y' && FOO=$HOME/.claude/b "c d\"e";(z)`)
	want := []string{"bash", "~/.claude/a.sh", "jq", "-r", ".x y", "FOO=$HOME/.claude/b", `c d"e`, "z"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shellWords mismatch (-want +got):\n%s", diff)
	}
}

func TestClaudeCommandFiles(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := `{
  // JSONC, as Claude Code accepts it
  "statusLine": {"type": "command", "command": "bash ~/.claude/statusline.sh"},
  "apiKeyHelper": "${HOME}/.claude/bin/key --fresh",
  "otelHeadersHelper": "/usr/local/bin/otel-headers",
  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": "python3 \"$HOME/.claude/scripts/guard x.py\""},
    {"type": "command", "command": "~/.claude/hooks/already-read-only.sh"},
    {"type": "command", "command": "` + home + `/.claude/local/claude --version; cat ~/.claude/../.bashrc"}]}]},
  "model": "opus",
}`
	if err := os.WriteFile(filepath.Join(home, ".claude/settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ClaudeCommandFiles(home)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(home, ".claude/bin/key"), filepath.Join(home, ".claude/scripts/guard x.py"), filepath.Join(home, ".claude/statusline.sh")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClaudeCommandFiles mismatch (-want +got):\n%s", diff)
	}

	if err := os.WriteFile(filepath.Join(home, ".claude/settings.json"), []byte(`{"statusLine": `), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ClaudeCommandFiles(home); err != nil || got != nil {
		t.Errorf("settings that do not parse gave %v, %v; want nothing, as Claude Code loads nothing from them", got, err)
	}
}
