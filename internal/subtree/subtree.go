// Package subtree says whether a path lies in a directory's subtree, the
// one helper for it: a method on the directory, so no call can give the
// two paths in the wrong order, as three helpers of the same name and
// opposite argument orders once could.
//
// The comparison is lexical, by name: both paths are cleaned first
// (filepath.Clean), so "/a/../b" is not in /a, "/a/" is /a, and /ab is
// not in /a. Links are not followed; callers compare resolved paths. An
// absolute path and a relative one are never in each other's subtree,
// and an empty path is ".", as Clean reads it.
package subtree

import (
	"path/filepath"
	"strings"
)

// Root is a directory taken as the root of its subtree, which holds the
// directory itself and every path below it.
type Root struct {
	dir string
}

// Of is the subtree rooted at dir.
func Of(dir string) Root {
	return Root{dir: filepath.Clean(dir)}
}

// Contains says whether p is the subtree's root or a path below it.
func (r Root) Contains(p string) bool {
	p = filepath.Clean(p)
	switch {
	case p == r.dir:
		return true
	case r.dir == "/":
		return strings.HasPrefix(p, "/")
	case r.dir == ".":
		return !filepath.IsAbs(p) && p != ".." && !strings.HasPrefix(p, "../")
	}
	return strings.HasPrefix(p, r.dir+"/")
}
