package gitindex

import (
	"strings"
	"unicode/utf8"
)

// VerifyPath reports whether git would accept path, of an entry of mode,
// from a tree: read-cache.c's verify_path with core.protectHFS and
// core.protectNTFS on, whatever a repository says. No component may be
// empty, ".", ".." or ".git" in any spelling HFS+ or NTFS could take for it
// (case, code points HFS+ ignores, the short name GIT~1, trailing dots and
// spaces, an alternate data stream), nor may a backslash start one of
// those; a symbolic link may not be named .gitmodules in any of them. Only
// a sparse directory entry may end in a slash.
func VerifyPath(path string, mode uint32) bool {
	link := mode&modeType == ModeSymlink
	for i := 0; ; {
		// i is the start of a component.
		rest := path[i:]
		if isHFSDot(rest, "git") || isNTFSDotGit(rest) {
			return false
		}
		if link && (isHFSDot(rest, "gitmodules") || isNTFSDot(rest, "gitmodules", "gi7eba")) {
			return false
		}
		if rest == "" {
			return i > 0 && mode&modeType == ModeDir
		}
		if rest[0] == '/' || rest[0] == '.' && !verifyDotfile(rest[1:], link) {
			return false
		}
		end := strings.IndexByte(rest, '/')
		comp := rest
		if end >= 0 {
			comp = rest[:end]
		}
		// With protectNTFS a backslash starts a component too.
		for j := 1; j < len(comp); j++ {
			if comp[j-1] == '\\' && (isNTFSDotGit(comp[j:]) || link && isNTFSDot(comp[j:], "gitmodules", "gi7eba")) {
				return false
			}
		}
		if end < 0 {
			return true
		}
		i += end + 1
	}
}

// verifyDotfile is git's verify_dotfile for what follows a leading dot.
func verifyDotfile(rest string, link bool) bool {
	if rest == "" || rest[0] == '/' {
		return false // "."
	}
	if len(rest) >= 3 && strings.EqualFold(rest[:3], "git") {
		after := rest[3:]
		if after == "" || after[0] == '/' {
			return false
		}
		if link && len(after) >= 7 && strings.EqualFold(after[:7], "modules") && (len(after) == 7 || after[7] == '/') {
			return false
		}
	}
	return !(rest[0] == '.' && (len(rest) == 1 || rest[1] == '/'))
}

// isHFSDot is git's is_hfs_dot_generic: the component at the start of path
// is "." and needle, in any case, with the code points HFS+ ignores
// anywhere in it.
func isHFSDot(path, needle string) bool {
	c, path := nextHFS(path)
	if c != '.' {
		return false
	}
	for i := 0; i < len(needle); i++ {
		c, path = nextHFS(path)
		if c > 127 || lower(byte(c)) != needle[i] {
			return false
		}
	}
	c, _ = nextHFS(path)
	return c == 0 || c == '/'
}

// nextHFS is git's next_hfs_char: the next code point HFS+ does not
// ignore; 0 at the end and, as for git, at bytes that are not UTF-8.
func nextHFS(s string) (rune, string) {
	for {
		if s == "" {
			return 0, ""
		}
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n <= 1 {
			return 0, ""
		}
		s = s[n:]
		switch {
		case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
			continue
		}
		return r, s
	}
}

// isNTFSDotGit is git's is_ntfs_dotgit: ".git" or "git~1", in any case,
// followed only by dots and spaces up to the component's end or a colon.
func isNTFSDotGit(name string) bool {
	var rest string
	switch {
	case len(name) >= 4 && name[0] == '.' && strings.EqualFold(name[1:4], "git"):
		rest = name[4:]
	case len(name) >= 5 && strings.EqualFold(name[:3], "git") && name[3:5] == "~1":
		rest = name[5:]
	default:
		return false
	}
	return spacesAndDots(rest, true)
}

// spacesAndDots reports whether name holds only dots and spaces up to its
// end, a colon, or (with seps) a slash or backslash.
func spacesAndDots(name string, seps bool) bool {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == ':', seps && (c == '/' || c == '\\'):
			return true
		case c != '.' && c != ' ':
			return false
		}
	}
	return true
}

// isNTFSDot is git's is_ntfs_dot_generic: "." and dotgit, its regular
// short name (its first six characters, "~" and 1 to 4), or a fall-back
// short name (shortPrefix's first characters, "~" and digits), followed by
// dots and spaces only.
func isNTFSDot(name, dotgit, shortPrefix string) bool {
	if len(name) > len(dotgit) && name[0] == '.' && strings.EqualFold(name[1:1+len(dotgit)], dotgit) {
		return spacesAndDots(name[1+len(dotgit):], false)
	}
	if len(name) >= 8 && strings.EqualFold(name[:6], dotgit[:6]) && name[6] == '~' && name[7] >= '1' && name[7] <= '4' {
		return spacesAndDots(name[8:], false)
	}
	sawTilde := false
	i := 0
	for ; i < 8; i++ {
		if i >= len(name) {
			return false
		}
		c := name[i]
		switch {
		case sawTilde:
			if c < '0' || c > '9' {
				return false
			}
		case c == '~':
			i++
			if i >= len(name) || name[i] < '1' || name[i] > '9' {
				return false
			}
			sawTilde = true
		case i >= 6, c&0x80 != 0, lower(c) != shortPrefix[i]:
			return false
		}
	}
	return spacesAndDots(name[i:], false)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
