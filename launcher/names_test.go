package launcher

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// write makes the file path with content, and its directories.
func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Link(from, to); err != nil {
		t.Fatal(err)
	}
}

// TestHeldHaveOneName: a held file, or a file below a held directory, with
// a second name refuses the launch naming it and the fix, whichever rule
// holds it; a git object with one is given a copy of its own; what is not
// held, a link below a held directory, and a missing shared file pass.
// Red without the link count's check.
func TestHeldHaveOneName(t *testing.T) {
	ws := t.TempDir()
	hooks := filepath.Join(ws, "tools/hooks")
	write(t, filepath.Join(hooks, "pre-commit"), "#!/bin/sh\n")
	write(t, filepath.Join(ws, "settings.json"), "{}\n")
	write(t, filepath.Join(ws, "notes/other"), "x\n")
	if err := os.Symlink(filepath.Join(ws, "notes/other"), filepath.Join(hooks, "linked")); err != nil {
		t.Fatal(err)
	}
	link(t, filepath.Join(ws, "notes/other"), filepath.Join(ws, "notes/other-2"))
	held := func(rule sandbox.Rule, op sandbox.Op, path string) *sandbox.Plan {
		return &sandbox.Plan{Mounts: []sandbox.Mount{
			{Op: sandbox.OpBind, Source: ws, Dest: ws, Rule: sandbox.RuleWorkspace},
			{Op: op, Source: path, Dest: path, Rule: rule},
		}}
	}
	for _, rule := range []sandbox.Rule{sandbox.RuleProtected, sandbox.RuleClaudeReadOnly, sandbox.RuleShareHome} {
		if err := heldHaveOneName(held(rule, sandbox.OpRoBind, hooks)); err != nil {
			t.Errorf("%s: a held directory whose files have one name: %v", rule, err)
		}
	}
	if err := heldHaveOneName(held(sandbox.RuleShareHome, sandbox.OpRoBindTry, filepath.Join(ws, "missing"))); err != nil {
		t.Errorf("a missing shared file: %v", err)
	}
	second := filepath.Join(ws, "notes/pre-commit")
	link(t, filepath.Join(hooks, "pre-commit"), second)
	file := filepath.Join(ws, "notes/settings.json")
	link(t, filepath.Join(ws, "settings.json"), file)
	for _, tc := range []struct {
		rule sandbox.Rule
		path string
		name string
	}{
		{sandbox.RuleProtected, hooks, filepath.Join(hooks, "pre-commit")},
		{sandbox.RuleClaudeReadOnly, filepath.Join(ws, "settings.json"), filepath.Join(ws, "settings.json")},
		{sandbox.RuleShareHome, filepath.Join(ws, "settings.json"), filepath.Join(ws, "settings.json")},
	} {
		err := heldHaveOneName(held(tc.rule, sandbox.OpRoBind, tc.path))
		if err == nil || !strings.HasPrefix(err.Error(), tc.name+", which the sandbox holds read-only, has 2 names (hard links)") || !strings.Contains(err.Error(), "cp -p "+tc.name) {
			t.Errorf("%s %s: got %v; want a refusal naming %s and the fix", tc.rule, tc.path, err, tc.name)
		}
	}
	// Not held: the workspace is writable anyway.
	plan := held(sandbox.RulePin, sandbox.OpBind, hooks)
	if err := heldHaveOneName(plan); err != nil {
		t.Errorf("a directory bound writable: %v", err)
	}
	if data, _ := os.ReadFile(second); string(data) != "#!/bin/sh\n" {
		t.Errorf("a refusal changed a file: %q", data)
	}
}

// TestHeldGitObjectGetsACopy: a git object below a held git directory that
// another repository shares by a hard link (a local clone) is replaced by a
// copy with one name, the same bytes and mode; the other name keeps the old
// file. Red without the copy (the launch is refused).
func TestHeldGitObjectGetsACopy(t *testing.T) {
	ws := t.TempDir()
	gitDir := filepath.Join(ws, ".git/modules/sub")
	object := filepath.Join(gitDir, "objects/4b/825dc642cb6eb9a060e54bf8d69288fbee4904")
	write(t, object, "blob")
	if err := os.Chmod(object, 0o444); err != nil {
		t.Fatal(err)
	}
	upstream := filepath.Join(t.TempDir(), "object")
	link(t, object, upstream)
	plan := &sandbox.Plan{Mounts: []sandbox.Mount{{Op: sandbox.OpRoBind, Source: gitDir, Dest: gitDir, Rule: sandbox.RuleProtected}}}
	if err := heldHaveOneName(plan); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(object)
	if err != nil {
		t.Fatal(err)
	}
	up, err := os.Stat(upstream)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(fi, up) || fi.Mode().Perm() != 0o444 {
		t.Errorf("the object is still the shared file, or its mode changed: %v", fi.Mode())
	}
	if data, _ := os.ReadFile(object); string(data) != "blob" {
		t.Errorf("the copy holds %q", data)
	}
	if entries, _ := os.ReadDir(filepath.Dir(object)); len(entries) != 1 {
		t.Errorf("the copy left %v", entries)
	}
}

// BenchmarkHeldHaveOneName: the check on a held tree of 2,000 files in 100
// directories (a plugin marketplace's clone under ~/.claude/plugins, say).
func BenchmarkHeldHaveOneName(b *testing.B) {
	root := b.TempDir()
	for d := range 100 {
		dir := filepath.Join(root, "d"+strconv.Itoa(d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 20 {
			if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	plan := &sandbox.Plan{Mounts: []sandbox.Mount{{Op: sandbox.OpRoBind, Source: root, Dest: root, Rule: sandbox.RuleClaudeReadOnly}}}
	for b.Loop() {
		if err := heldHaveOneName(plan); err != nil {
			b.Fatal(err)
		}
	}
}
