// Package namerule holds the rules on the names the sandbox may make or
// write where programs outside see them, as the plan states them (package
// sandbox) and the warden enforces them (package warden), one type each,
// and all of one plan's as one value, Rules (ADR 0014, 0033, 0034). Every name is refused in all the spellings a file
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

// Rules are every rule on names one plan states: what the sandbox may not
// make or write, where, and what is made in place of a refusal. The plan
// carries them as one value (sandbox.Plan's NameRules) and the launcher
// hands that value to the warden whole (warden.Rules), so a rule the plan
// adds reaches the warden with no copy in between that could leave it out.
type Rules struct {
	// Outside names are refused in every directory the outside can see:
	// every file system but the sandbox's own.
	Outside []Outside
	// Dirs are names refused in a directory, because a program outside
	// would obey a file of that name there (ADR 0014); Paths are the
	// protected paths missing at launch.
	Dirs  []InDir
	Paths []Path
	// InNamedDirs are names refused, with everything below them, in every
	// directory of a given name the outside sees, whenever it appeared: git
	// outside obeys a ".git" directory's config and hooks in any
	// repository, also one made outside during the session.
	InNamedDirs []InNamedDir
	// GitDirs are the git directories the outside sees that the launch
	// found, with their working trees: an index is made there only by a
	// rename the warden checks, as in every directory named .git (ADR
	// 0038).
	GitDirs []GitDir
	// GitStore is where a new ".git" is made instead of where the outside
	// sees it (ADR 0034).
	GitStore *GitStore
	// InsideOnly are paths inside where the git store is bound (ADR 0034):
	// directly on those mounts, as on the sandbox's own file systems, no
	// outside name and no named directory's rule applies.
	InsideOnly []string
	// Checkouts are those of InsideOnly where the git store holds working
	// trees a user or a shell prompt may enter outside (Claude Code's
	// checkouts): directly on those mounts a ".git" is made in the git
	// store and the CheckoutNames are refused in every spelling, as where
	// the outside sees; the other outside names are not.
	Checkouts     []string
	CheckoutNames []string
	// CopyThrough are names of Dirs a copy in the git store is bound on
	// (ADR 0034): the sandbox may write them while they are that copy.
	CopyThrough []CopyThrough
	// PrivateNetwork says the sandbox has a network namespace of its own
	// (network = allowlist): every abstract unix socket name in it is the
	// sandbox's. Otherwise it shares the container's abstract names, and
	// the warden refuses them.
	PrivateNetwork bool
}

// A GitStore is the workspace's directory of git directories made during
// its sessions: Dir outside, bound at Inside in the sandbox. A ".git"
// directory or file the sandbox makes where the outside can see it is made
// in Dir under a new name, and the ".git" is a link to that name under
// Inside: inside, git follows it; outside, the link leads nowhere, and git
// looks for a repository further up as if the directory were a plain one.
type GitStore struct {
	Dir    string
	Inside string
}
