package subtree

import "testing"

func TestContains(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		want   bool
	}{
		{"/a", "/a", true},
		{"/a", "/a/b", true},
		{"/a", "/a/b/c", true},
		{"/a/b", "/a", false}, // the other order
		{"/a", "/ab", false},  // a sibling sharing the prefix
		{"/a", "/ab/c", false},
		{"/ab", "/a", false},
		{"/a", "/b", false},
		// Trailing slashes name the same directory.
		{"/a/", "/a", true},
		{"/a", "/a/", true},
		{"/a/", "/a/b/", true},
		{"/a/", "/ab", false},
		{"/a//", "/a//b", true},
		// ".." is read as written, not skipped over.
		{"/a", "/a/../b", false},
		{"/a", "/a/..", false},
		{"/a", "/a/b/..", true},
		{"/a/b", "/a/b/../c", false},
		{"/a/../b", "/b/c", true},
		{"/a", "/a/./b", true},
		// The root holds every absolute path, and only those.
		{"/", "/", true},
		{"/", "/a", true},
		{"/", "/..", true},
		{"/", "a", false},
		{"//", "/a", true},
		{"/a", "/", false},
		// Relative paths: among themselves, never with absolute ones.
		{"a", "a/b", true},
		{"a", "ab", false},
		{"a", "/a/b", false},
		{"/a", "a/b", false},
		{"a/b", "a", false},
		{".", "a", true},
		{".", "a/b", true},
		{".", "..", false},
		{".", "../a", false},
		{".", "..a", true},
		{".", "/a", false},
		{"..", "../a", true},
		{"..", "..", true},
		{"..", "a", false},
		// An empty path is ".": it holds no absolute path.
		{"", "/a", false},
		{"", "", true},
		{"", "a", true},
		{"/a", "", false},
	} {
		if got := Of(c.dir).Contains(c.p); got != c.want {
			t.Errorf("Of(%q).Contains(%q) = %v, want %v", c.dir, c.p, got, c.want)
		}
	}
}
