package sandbox

import (
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"golang.org/x/sys/unix"
)

// A shell prompt, an editor's language support and shell plugins run a
// toolchain whenever a directory is entered (rustc --version, node
// --version), and a toolchain manager picks the program from a file in
// that directory or one above it: rustup's proxies run the toolchain a
// rust-toolchain.toml's path names, Yarn runs its yarnPath. A file the
// sandbox wrote there would pick a program it planted, run outside by
// nobody's choice (ADR 0032). Files that pick only a version name (the
// tool's own directories or a registry supply the program) are not here.

const (
	whyRustup = "rustup's proxies outside (a prompt's rustc --version, rust-analyzer) run the toolchain its path names"
	whyYarn   = "yarn outside runs the program its yarnPath (yarn-path in Yarn 1) names"
	whyMise   = "mise outside runs its hooks and the scripts its env sources in every shell that enters the directory, and the programs its path: versions name"
	whyTools  = "asdf's and mise's shims outside run the program a path: version there names"
	whyDotenv = "oh-my-zsh's dotenv plugin sources it as shell code in every shell that enters the directory"
)

// selectorFiles are the files, at any depth, that pick the program a tool
// outside runs by itself. This is the one list: the walk looks for these
// names, the warden refuses them where the outside sees them, and every one
// found is held read-only.
var selectorFiles = []struct{ name, why string }{
	{"rust-toolchain.toml", whyRustup},
	{"rust-toolchain", whyRustup},
	{".yarnrc.yml", whyYarn},
	{".yarnrc", whyYarn},
	{".tool-versions", whyTools},
	{"mise.toml", whyMise},
	{".mise.toml", whyMise},
	{"mise.local.toml", whyMise},
	{".mise.local.toml", whyMise},
	{".env", whyDotenv},
}

// selectorDirs are mise's configuration in directories of its own names,
// refused with everything below them in every directory of that name the
// outside sees.
var selectorDirs = []namerule.InNamedDir{
	{Dir: ".config", Names: []string{"mise.toml", "mise"}, Why: whyMise},
	{Dir: ".mise", Names: []string{"config.toml"}, Why: whyMise},
	{Dir: "mise", Names: []string{"config.toml"}, Why: whyMise},
}

// selectorOutsideNames are selectorFiles as names the sandbox may not make
// where the outside sees them, in any case (a case-insensitive file
// system finds them in any).
func selectorOutsideNames() []namerule.Outside {
	out := make([]namerule.Outside, 0, len(selectorFiles))
	for _, f := range selectorFiles {
		out = append(out, namerule.Outside{Name: f.name, Why: f.why})
	}
	return out
}

// selectorHolds are the holds for every file of selectorFiles the walk
// found in the roots: read-only, its name refused, the directories on the
// way pinned; a link's name is refused and its target held. A directory of
// such a name is none of these tools' files (a virtual environment named
// .env): it is left alone.
func selectorHolds(found []foundEntry) []hold {
	var out []hold
	for _, e := range found {
		if e.kind != unix.DT_REG && e.kind != unix.DT_LNK {
			continue
		}
		for _, f := range selectorFiles {
			if e.rule == f.name {
				out = append(out, hold{path: e.path, why: f.why})
			}
		}
	}
	return out
}
