package gitstore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stage adds files to the stored repository's index, as a session's git
// add does.
func stage(t *testing.T, dir, entry string, files ...string) {
	t.Helper()
	for _, f := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte("#!/bin/sh\n"), 0o755)
	}
	runGit(t, dir, append([]string{"--git-dir=" + entry, "--work-tree=" + dir, "add"}, files...)...)
}

// The index a session left is carried only when git outside would write
// nothing from it that git refuses to check out, or that the sandbox may
// not write: a path rewritten in it is refused, and nothing changes.
// Red without copyIndex's check.
func TestAdoptChecksTheIndex(t *testing.T) {
	for _, c := range []struct{ from, to string }{
		{"xgit/hooks/post-checkout", ".git/hooks/post-checkout"},
		{"xGIT/hooks/post-checkout", ".GIT/hooks/post-checkout"},
		{"xclaude/settings.local.json", ".claude/settings.local.json"},
		{"a/b/xtool-versions", "a/b/.tool-versions"},
		{"sub/xmcp.json", "sub/.mcp.json"},
	} {
		t.Run(c.to, func(t *testing.T) {
			store, dir, entry := stored(t, "", nil)
			stage(t, dir, entry, c.from)
			index := filepath.Join(entry, "index")
			data, _ := os.ReadFile(index)
			os.WriteFile(index, bytes.Replace(data, []byte(c.from), []byte(c.to), 1), 0o644)
			_, err := Adopt(Store{Dir: store}, dir)
			if err == nil || !strings.Contains(err.Error(), index+": lists \""+c.to+"\"") {
				t.Fatalf("Adopt: %v, want the index refused", err)
			}
			if _, ok := lstatLink(filepath.Join(dir, ".git")); !ok {
				t.Error("the .git link is gone")
			}
		})
	}
}

// What a session staged stays staged, a split index with its shared
// index.
func TestAdoptCarriesTheIndex(t *testing.T) {
	for _, split := range []bool{false, true} {
		store, dir, entry := stored(t, "", nil)
		stage(t, dir, entry, "first")
		if split {
			// A failing fsmonitor (stored's) makes git write the index whole.
			runGit(t, dir, "--git-dir="+entry, "config", "--unset", "core.fsmonitor")
			runGit(t, dir, "--git-dir="+entry, "--work-tree="+dir, "update-index", "--split-index")
		}
		stage(t, dir, entry, "staged", "a/b/also")
		if data, _ := os.ReadFile(filepath.Join(entry, "index")); split != bytes.Contains(data, []byte("link")) {
			t.Fatalf("split %v: the index is not so", split)
		}
		if _, err := Adopt(Store{Dir: store}, dir); err != nil {
			t.Fatal(err)
		}
		if got := runGit(t, dir, "diff", "--cached", "--name-only"); got != "a/b/also\nfirst\nstaged" {
			t.Errorf("split %v: staged %q", split, got)
		}
	}
}

// An entry at a path the sandbox may not write is carried when the
// working tree's file there holds it (made outside: a session cannot
// write it), and refused when it does not (a session's clone could not
// check it out). Red without CheckIndex's comparison with the file.
func TestAdoptCarriesTheUsersOwn(t *testing.T) {
	for _, same := range []bool{true, false} {
		store, dir, entry := stored(t, "", nil)
		stage(t, dir, entry, ".claude/settings.json")
		if !same {
			os.WriteFile(filepath.Join(dir, ".claude/settings.json"), []byte("other"), 0o755)
		}
		_, err := Adopt(Store{Dir: store}, dir)
		if same && err != nil {
			t.Errorf("the working tree's own file: %v", err)
		}
		if !same && (err == nil || !strings.Contains(err.Error(), `lists ".claude/settings.json"`)) {
			t.Errorf("another content: %v, want refused", err)
		}
	}
}
