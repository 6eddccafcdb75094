package gitstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// userFiles makes, outside the store, a directory of the user's with a
// file in it, and returns the directory and a check that both are whole.
func userFiles(t *testing.T) (string, func()) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "user")
	if err := os.MkdirAll(filepath.Join(dir, "y"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "y", "keep"), []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, func() {
		t.Helper()
		if data, err := os.ReadFile(filepath.Join(dir, "y", "keep")); err != nil || string(data) != "mine\n" {
			t.Errorf("the user's file outside the store was touched: %q, %v", data, err)
		}
	}
}

// A removal beneath the store removes links, never what they lead to,
// and refuses a path that passes one.
func TestRemoveAllFollowsNoLink(t *testing.T) {
	cases := []struct {
		name, rel string
		lay       func(store, outside string)
		refused   bool
	}{
		{"an entry that is a link", "e", func(s, o string) { os.Symlink(o, filepath.Join(s, "e")) }, false},
		{"a link to / in an entry", "e", func(s, o string) {
			os.MkdirAll(filepath.Join(s, "e", "objects"), 0o755)
			os.Symlink("/", filepath.Join(s, "e", "objects", "root"))
			os.Symlink(o, filepath.Join(s, "e", "user"))
		}, false},
		{"a link on the way", "x/y", func(s, o string) { os.Symlink(o, filepath.Join(s, "x")) }, true},
		{"a way up", "e/../../user/y", func(s, o string) { os.MkdirAll(filepath.Join(s, "e"), 0o755) }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outside, whole := userFiles(t)
			store := filepath.Join(filepath.Dir(outside), "store")
			os.MkdirAll(store, 0o755)
			c.lay(store, outside)
			st, err := openTree(store)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			err = st.removeAll(c.rel)
			if c.refused != (err != nil) {
				t.Errorf("removeAll(%s): %v, want refused %v", c.rel, err, c.refused)
			}
			if err != nil && !strings.Contains(err.Error(), "not followed") {
				t.Errorf("removeAll(%s): %v, want the link named", c.rel, err)
			}
			whole()
			if names, _ := os.ReadDir(store); !c.refused && len(names) != 0 {
				t.Errorf("the store still holds %v", names)
			}
		})
	}
}

// An entry a session turns into a link between repos listing it and
// --prune removing it is removed as the link, and nothing it leads to.
func TestPruneRemovesALinkNotItsTarget(t *testing.T) {
	outside, whole := userFiles(t)
	store := filepath.Join(filepath.Dir(outside), "store")
	os.MkdirAll(filepath.Join(store, "made-0123456789abcdef", "objects"), 0o755)
	entries, err := List(store, nil)
	if err != nil || len(entries) != 1 {
		t.Fatalf("List: %v, %v", entries, err)
	}
	os.RemoveAll(filepath.Join(store, "made-0123456789abcdef"))
	os.Symlink(filepath.Join(outside, "y"), filepath.Join(store, "made-0123456789abcdef"))
	if gone, err := Prune(store, entries); err != nil || len(gone) != 1 {
		t.Fatalf("Prune: %v, %v", gone, err)
	}
	whole()
	if _, err := os.Lstat(filepath.Join(store, "made-0123456789abcdef")); !os.IsNotExist(err) {
		t.Errorf("the link stays: %v", err)
	}
}

// A removal while a session swaps a directory on its way for a link to
// the user's directory, and back, removes nothing outside the store,
// whichever it meets.
func TestRemoveAllSurvivesSwaps(t *testing.T) {
	outside, whole := userFiles(t)
	// The user's directory has the names the removal meets below e/a.
	for _, d := range []string{"b/c", "d"} {
		os.MkdirAll(filepath.Join(outside, d), 0o755)
		os.WriteFile(filepath.Join(outside, d, "x"), []byte("mine\n"), 0o600)
	}
	mirrored := func() {
		t.Helper()
		for _, f := range []string{"b/c/x", "d/x"} {
			if _, err := os.Stat(filepath.Join(outside, f)); err != nil {
				t.Errorf("the user's %s was removed: %v", f, err)
			}
		}
	}
	for round := range 20 {
		store := filepath.Join(t.TempDir(), "store")
		for _, d := range []string{"e/a/b/c", "e/a/d", "e/f"} {
			os.MkdirAll(filepath.Join(store, d), 0o755)
			os.WriteFile(filepath.Join(store, d, "x"), []byte("x"), 0o644)
		}
		st, err := openTree(store)
		if err != nil {
			t.Fatal(err)
		}
		a, aside := filepath.Join(store, "e", "a"), filepath.Join(store, "e", "a.aside")
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 200 {
				if os.Rename(a, aside) != nil {
					return
				}
				os.Symlink(outside, a)
				os.Remove(a)
				if os.Rename(aside, a) != nil {
					return
				}
			}
		}()
		st.removeAll("e")
		<-done
		st.Close()
		whole()
		mirrored()
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}
