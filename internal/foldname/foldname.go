// Package foldname compares a name the sandbox makes with a protected one
// the way the file systems a workspace may sit on do (ADR 0033). A
// workspace bound from macOS or Windows, or a Linux directory with the
// casefold attribute, finds a file under other spellings of its name: in
// another case, in another Unicode normalization, with code points HFS+
// ignores, with trailing dots or spaces (which Windows strips), or by its
// 8.3 short name. A name that any of them could take for a protected name
// is that name.
package foldname

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Same reports whether a file system could find the file named ruled when
// asked for name.
func Same(ruled, name string) bool {
	if ruled == name {
		return true
	}
	r := Key(ruled)
	return r != "" && SameKey(r, Key(name)) // "" is the key of "." and "..", never a rule's name
}

// SameKey is Same for the keys of two names, which a caller comparing one
// name with many, or many with one, works out once. The empty key, the
// first component of an absolute path, is the same only as itself.
func SameKey(ruled, name string) bool {
	return ruled == name || strings.IndexByte(name, '~') >= 0 && shortName(ruled, name)
}

// Exact reports whether the only key SameKey takes key for is key itself
// (it has no tilde, so it is no short name): a caller may then look it up
// in a map of keys.
func Exact(key string) bool { return !strings.Contains(key, "~") }

// Key is the form of a name that its other spellings share: without the
// code points HFS+ ignores, case-folded (full Unicode folding, which
// covers the simple folding NTFS and ext4 use), canonically decomposed
// (HFS+ stores names decomposed, APFS and ext4 compare them so), without
// trailing dots and spaces.
func Key(name string) string {
	ascii := true
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return trimDotsSpaces(strings.ToLower(name))
	}
	name = strings.Map(func(r rune) rune {
		if hfsIgnored(r) {
			return -1
		}
		return r
	}, name)
	// A Caser keeps state between calls: the warden's workers fold at
	// once, so each fold has its own.
	name = norm.NFD.String(cases.Fold().String(norm.NFD.String(name)))
	return trimDotsSpaces(name)
}

// trimDotsSpaces is name without its trailing dots and spaces (which
// Windows strips), as strings.TrimRight(name, ". ") is, without the set
// that builds at each call: the warden keys every path of an index.
func trimDotsSpaces(name string) string {
	i := len(name)
	for i > 0 && (name[i-1] == '.' || name[i-1] == ' ') {
		i--
	}
	return name[:i]
}

// hfsIgnored are the code points HFS+ leaves out of a name when it
// compares it, as git's is_hfs_dotgit knows them.
func hfsIgnored(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// shortName reports whether n, a key, could be an 8.3 short name NTFS made
// for the long name whose key is r: the long name's first characters
// without dots, a tilde and a number, and the first three characters of
// its extension. Past the fourth, Windows keeps two characters and adds
// four of a hash, which the test takes as any four.
func shortName(r, n string) bool {
	stem, rest, ok := strings.Cut(n, "~")
	if !ok || stem == "" {
		return false
	}
	num, ext, _ := strings.Cut(rest, ".")
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return false
	}
	long := strings.TrimLeft(r, ".")
	base, longExt := long, ""
	if i := strings.LastIndex(long, "."); i >= 0 {
		base, longExt = long[:i], long[i+1:]
	}
	base = strings.NewReplacer(".", "", " ", "").Replace(base)
	if len(longExt) > 3 {
		longExt = longExt[:3]
	}
	if ext != longExt || base == "" {
		return false
	}
	if strings.HasPrefix(base[:min(6, len(base))], stem) {
		return true
	}
	head := base[:min(2, len(base))]
	hash, ok := strings.CutPrefix(stem, head)
	return ok && len(hash) == 4 && strings.Trim(hash, "0123456789abcdef") == ""
}
