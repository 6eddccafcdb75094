// Package namerule holds the rules on the names the sandbox may make or
// write where programs outside see them, as the plan states them (package
// sandbox) and the warden enforces them (package warden), one type each
// (ADR 0014, 0033, 0034). Every name is refused in all the spellings a file
// system could take for it (ADR 0033).
package namerule

// Outside is a name the sandbox may create only on its own file systems
// (its private /tmp, its home): anywhere else, a program outside would obey
// it (".git", ".mcp.json", ...).
type Outside struct {
	Name string
	Why  string
}

// InDir refuses the creation of Names directly in Dir, on every call that
// creates a name: mkdir, mknod, open with O_CREAT, rename, link and
// symlink.
type InDir struct {
	Dir   string   // an existing directory, symlinks resolved
	Names []string // refused in every spelling
	Why   string   // shown by argv and in refusals
}

// Path refuses making or writing anything at or below Path, a protected
// path that is missing at launch: should a program outside make it during
// the session (the user's editor makes .vscode/), no read-only mount holds
// it, and the warden refuses in its place. On the way to Path only empty
// directories may be made: no link, no file, no directory moved there with
// Path inside it.
type Path struct {
	Path string
	Why  string
}

// InNamedDir refuses Names, with everything below them, in every directory
// named Dir (".git", ".claude") that the outside sees, whenever it
// appeared.
type InNamedDir struct {
	Dir   string
	Names []string
	Why   string
}

// CopyThrough is a name in Dir on which Store, the sandbox's own copy in
// the git store of what the name holds outside, is bound (paths outside):
// the sandbox may write the name while it is that copy (ADR 0034). Launch
// is the copy as the launch read it, which the sandbox cannot write.
type CopyThrough struct {
	Dir, Name, Store, Launch string
}

// GitDir is a git directory the outside sees and the sandbox may write,
// with the working trees git uses it from (its tops): an index written
// there must list only what the sandbox may write below each (ADR 0038).
// A top is "" when the launch could not tell it.
type GitDir struct {
	Dir  string
	Tops []string
}
