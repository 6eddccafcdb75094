package foldname

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSame(t *testing.T) {
	for _, c := range []struct {
		ruled, name string
		same        bool
	}{
		{".git", ".git", true},
		{".git", ".GIT", true},
		{".git", ".Git", true},
		{"commondir", "COMMONDIR", true},
		{"settings.json", "Settings.json", true},
		{"hooks", "hoo\u212as", true}, // KELVIN SIGN folds to k
		{".git", ".g\u0130t", false},  // dotted capital I folds to i and a combining dot
		{"tasks.json", "TASKS.JSON", true},
		{".git", ".g\u200cit", true},      // ZERO WIDTH NON-JOINER, ignored by HFS+
		{".git", "\ufeff.git", true},      // ZERO WIDTH NO-BREAK SPACE
		{".git", ".gi\u206ft", true},      // NOMINAL DIGIT SHAPES
		{".git", ".gi\u200bt", false},     // ZERO WIDTH SPACE is not ignored
		{"caf\u00e9", "cafe\u0301", true}, // composed and decomposed é
		{"caf\u00e9", "CAFE\u0301", true},
		{"caf\u00e9", "cafe", false},
		{"stra\u00dfe", "STRASSE", true}, // full folding: ß is ss
		{".git", ".git.", true},          // Windows strips trailing dots
		{".git", ".git . .", true},       // and spaces
		{".git", "git", false},
		{".git", ".gitx", false},
		{".git", ".git/", false},
		{".git", "GIT~1", true}, // 8.3 short names
		{".git", "git~12", true},
		{".git", "GI~3", true},
		{".git", "GIT~", false},
		{".git", "GIT~A", false},
		{".git", "GIT~1.X", false},
		{".git", "GIT1", false},
		{".devcontainer", "DEVCON~1", true},
		{".devcontainer", "DEVCONTA~1", false},
		{".devcontainer", "DE1F3A~5", true}, // two characters and a hash
		{".devcontainer", "DE1G3A~5", false},
		{".devcontainer", "XY1F3A~5", false},
		{".mcp.json", "MCP~1.JSO", true},
		{".mcp.json", "MCP~1", false},
		{"settings.json", "SETTIN~2.JSO", true},
		{"settings.json", "SETTIN~2.JS", false},
		{".claude", "CLAUDE~1", true},
		{".", "..", false},
		{"..", ".", false},
		{".git", "", false},
	} {
		if got := Same(c.ruled, c.name); got != c.same {
			t.Errorf("Same(%q, %q) = %v, want %v", c.ruled, c.name, got, c.same)
		}
	}
}

func TestExact(t *testing.T) {
	for _, c := range []struct {
		key   string
		exact bool
	}{{".git", true}, {"git~1", false}, {"settings.json", true}, {"settin~2.jso", false}} {
		if got := Exact(c.key); got != c.exact {
			t.Errorf("Exact(%q) = %v, want %v", c.key, got, c.exact)
		}
		// A key Exact passes is the same as no other rule's key.
		if c.exact && SameKey(".git", c.key) != (c.key == ".git") {
			t.Errorf("SameKey(.git, %q) is not key equality", c.key)
		}
	}
}

func TestFolds(t *testing.T) {
	dir := t.TempDir()
	if folds, how := Folds(dir); folds || how != "cannot tell: no entry has a letter to look up in another case" {
		t.Errorf("Folds(empty) = %v, %q", folds, how)
	}
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if folds, how := Folds(dir); folds || how != "Makefile is not found as mAKEFILE" {
		t.Errorf("Folds(case-sensitive) = %v, %q", folds, how)
	}
	// A file system that folds case finds the same file by the other
	// name; a link is what the test can make of that here.
	if err := os.Link(filepath.Join(dir, "Makefile"), filepath.Join(dir, "mAKEFILE")); err != nil {
		t.Fatal(err)
	}
	if folds, how := Folds(dir); !folds || how != "Makefile is found as mAKEFILE" {
		t.Errorf("Folds(folding) = %v, %q", folds, how)
	}
}
