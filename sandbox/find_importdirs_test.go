package sandbox

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A Python command's first directories: held when the sandbox can write
// them and they are not where the command runs, else the launch is
// refused with the fix.
func TestProjectImportDirs(t *testing.T) {
	for _, tt := range []struct {
		name, command string
		want          []string // the files ProjectCommandFiles returns
		err           string   // what a refusal says, when it refuses
	}{
		{"-c in the project's root", `python3 -c 'import json, helper'`, nil, `runs Python with the directory it runs in first on its module path; a Claude Code started outside runs it in the project's root`},
		{"-m in the project's root", `/usr/bin/python3 -m nbstripout`, nil, "add -P after the interpreter"},
		{"a script read from the input", `python3 - < /dev/null`, nil, "the directory it runs in"},
		{"a script in the root", `python3 "$CLAUDE_PROJECT_DIR"/lint.py`, nil, "the directory $CLAUDE_PROJECT_DIR first"},
		{"behind a wrapper", `timeout 5 env A=1 python3 -m tool`, nil, "the directory it runs in"},
		{"PYTHONPATH in the project", `PYTHONPATH=.:/opt/lib python3 -P -m tool`, nil, "the directory it runs in"},
		{"a script's directory is held", `python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/check.py`, []string{".claude/hooks/", ".claude/hooks/check.py"}, ""},
		{"a PYTHONPATH below the project is held", `PYTHONPATH=$CLAUDE_PROJECT_DIR/lib python3 -P -c 'import x'`, []string{"lib/"}, ""},
		{"-P, -I, PYTHONSAFEPATH", `python3 -P -m a; python3 -I -c 'import b'; PYTHONSAFEPATH=1 python3 -c 'import c'; python3 -P x.py`, []string{"x.py"}, ""},
		{"a directory outside the project", `python3 /opt/tools/x.py`, nil, ""},
		{"Perl's -I at the root", `perl -I. -MHelper -e 1`, nil, `runs Perl with the directory it runs in first on its module path; a Claude Code started outside runs it in the project's root, where a session could put a module that a use or require of its name loads; ` + libraryFix},
		{"Ruby's -I and RUBYLIB below the project are held", `RUBYLIB=$CLAUDE_PROJECT_DIR/lib ruby -I vendor x.rb`, []string{"lib/", "vendor/", "x.rb"}, ""},
		{"none of their own", `node -e 'require("x")'; perl -e 1; ruby -e 1`, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			makeFiles(t, dir, map[string]string{"ws/.claude/settings.json": hookSettings(t, tt.command), "ws/lib/": "", "ws/vendor/": ""})
			got, err := ProjectCommandFiles(ws)
			switch {
			case tt.err == "" && err != nil:
				t.Fatal(err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("ProjectCommandFiles: %v, want a refusal saying %q", err, tt.err)
			case tt.err != "" && !strings.HasPrefix(err.Error(), filepath.Join(ws, ".claude/settings.json")+": "):
				t.Errorf("the refusal %q does not start with the file", err)
			}
			if diff := cmp.Diff(tt.want, got); tt.err == "" && diff != "" {
				t.Errorf("ProjectCommandFiles mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClaudeImportDirs(t *testing.T) {
	for _, tt := range []struct {
		name, command string
		want          []string // relative to the home
		err           string
	}{
		{"a script in ~/.claude", `python3 ~/.claude/status.py`, nil, "~/.claude is writable inside"},
		{"a relative script, from the home", `python3 .claude/x.py`, nil, "the directory .claude first"},
		// Run in a project: UserCommandFilesInWorkspace's.
		{"-c", `python3 -c 'import json'`, nil, ""},
		{"a script below ~/.claude", `python3 "$HOME"/.claude/tools/x.py`, []string{".claude/tools/", ".claude/tools/x.py"}, ""},
		{"-P, a script elsewhere", `python3 -P -c 'import json'; python3 /opt/x.py`, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			makeFiles(t, home, map[string]string{".claude/settings.json": hookSettings(t, tt.command)})
			got, err := ClaudeCommandFiles(home)
			switch {
			case tt.err == "" && err != nil:
				t.Fatal(err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("ClaudeCommandFiles: %v, want a refusal saying %q", err, tt.err)
			}
			var rel []string
			for _, p := range got {
				r, _ := filepath.Rel(home, p)
				if strings.HasSuffix(p, "/") {
					r += "/"
				}
				rel = append(rel, r)
			}
			if diff := cmp.Diff(tt.want, rel); tt.err == "" && diff != "" {
				t.Errorf("ClaudeCommandFiles mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// The user's commands run in the workspace too, when a Claude Code is
// started there outside: relative paths and $CLAUDE_PROJECT_DIR's are the
// workspace's files, and Python's working directory is its root.
func TestUserCommandFilesInWorkspace(t *testing.T) {
	dir := t.TempDir()
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	makeFiles(t, dir, map[string]string{
		"home/.claude/settings.json":       hookSettings(t, `bash check.sh; "$CLAUDE_PROJECT_DIR"/.claude/hooks/fmt.sh; ~/.claude/own.sh; python3 tools/x.py`),
		"home/.claude/settings.local.json": hookSettings(t, `bash local.sh`),
		"ws/tools/":                        "",
	})
	got, err := UserCommandFilesInWorkspace(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	// Not the home's own (~/.claude/own.sh), nor the home's local
	// settings' (local.sh), which run only in the home.
	want := []string{".claude/hooks/fmt.sh", "check.sh", "tools/", "tools/x.py"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UserCommandFilesInWorkspace mismatch (-want +got):\n%s", diff)
	}
	makeFiles(t, dir, map[string]string{"home/.claude/settings.json": hookSettings(t, `python3 -c 'import json, helper'`)})
	_, err = UserCommandFilesInWorkspace(ws, home)
	if want := filepath.Join(home, ".claude/settings.json") + `: "python3 -c 'import json, helper'" runs Python with the directory it runs in first on its module path; a Claude Code started outside runs it in the project's root`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("UserCommandFilesInWorkspace: %v, want a refusal starting %q", err, want)
	}
}
