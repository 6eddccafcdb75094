package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/gitconfig"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
)

// HomeGitConfig is the git configuration the sandbox's home gets, made from
// the user's own: the variables on the allow-list (gitConfigCarried), in
// git's order, written by gitconfig.Format. bwrap makes it a file of the
// home's tmpfs (OpFile), the sandbox's own: a `git config --global` inside
// changes that file, and nothing of it leaves the sandbox.
type HomeGitConfig struct {
	Data    []byte
	Carried []CarriedKey
	// LeftOut is how many variables of the user's configuration stay out;
	// their names are not shown, since a name may hold a secret (a URL
	// with a token in url.<base>.insteadOf).
	LeftOut int
	// Files are the user's files read, in git's order, includes among them.
	Files []string
}

// CarriedKey is one variable the home's git configuration carries, where
// the user's configuration has it, and why it may enter.
type CarriedKey struct {
	Name string
	File string
	Line int
	Why  string
}

// GitConfigFile is where the home's git configuration is, below the home:
// the global file git reads inside, where no GIT_CONFIG_GLOBAL is passed.
const GitConfigFile = ".gitconfig"

// GitConfigCarried reports whether the home's git configuration may hold
// the variable name (as gitconfig.Entry spells it), and why.
func GitConfigCarried(name string) (string, bool) {
	e := gitconfig.Entry{Name: name}
	for _, g := range gitConfigCarried {
		for _, n := range g.names {
			if carriedBy(e, n) {
				return g.why, true
			}
		}
	}
	return "", false
}

// carriedBy reports whether the allow-list's name n covers e: the same
// section and key, case aside, and the same subsection, whose case counts
// (git's rule); a name "section.*" covers its whole section. A name
// without a section (a key before any header) is no variable of it.
func carriedBy(e gitconfig.Entry, n string) bool {
	section, rest, _ := strings.Cut(n, ".")
	if !strings.Contains(e.Name, ".") || !strings.EqualFold(e.Section(), section) {
		return false
	}
	if rest == "*" {
		return true
	}
	sub, key := "", rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		sub, key = rest[:i], rest[i+1:]
	}
	return e.Subsection() == sub && strings.EqualFold(e.Key(), key)
}

// UserGitConfigs are the files git outside reads as the user's global
// configuration, in its order: GIT_CONFIG_GLOBAL alone when set (none
// when it is not an absolute path: a relative one is read from wherever
// git runs), else the XDG file and ~/.gitconfig. A relative
// XDG_CONFIG_HOME is read from the working directory, the workspace,
// which the sandbox writes: its file is left out.
func UserGitConfigs(env launchenv.Env, home string) []string {
	if p, ok := env.Lookup("GIT_CONFIG_GLOBAL"); ok {
		if filepath.IsAbs(p) {
			return []string{p}
		}
		return nil
	}
	var files []string
	switch x, _ := env.Lookup("XDG_CONFIG_HOME"); {
	case x == "":
		files = append(files, filepath.Join(home, ".config/git/config"))
	case filepath.IsAbs(x):
		files = append(files, filepath.Join(x, "git/config"))
	}
	return append(files, filepath.Join(home, GitConfigFile))
}

// homeGitConfig reads the user's git configuration as git outside would,
// includes and all but an includeIf's (which apply in some repositories
// only), and keeps what the allow-list carries; nil when a share-home
// line shares ~/.gitconfig itself (the user's file, not one made from
// it). A file git would refuse is an error
// naming it and its line: the protection of git's configuration refuses
// the same file first (protectGit).
func homeGitConfig(c *Conf, l Launch) (*HomeGitConfig, error) {
	for _, sh := range c.ShareHome {
		if filepath.Clean(sh.Value) == GitConfigFile {
			return nil, nil
		}
	}
	g := &HomeGitConfig{}
	var carried []gitconfig.Entry
	for _, f := range UserGitConfigs(l.Env, l.Home) {
		entries, files, err := gitconfig.LoadUnconditional(f, l.Home)
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			if file.Exists {
				g.Files = append(g.Files, file.Path)
			}
		}
		for _, e := range entries {
			why, ok := GitConfigCarried(e.Name)
			if !ok {
				g.LeftOut++
				continue
			}
			carried = append(carried, e)
			g.Carried = append(g.Carried, CarriedKey{Name: e.Name, File: e.File, Line: e.Line, Why: why})
		}
	}
	if len(carried) == 0 {
		return g, nil
	}
	var err error
	if g.Data, err = gitconfig.Format(carried); err != nil {
		return nil, fmt.Errorf("the git configuration for the sandbox's home: %w", err)
	}
	return g, nil
}

// gitConfig adds the home's git configuration: a file of the home's tmpfs,
// before the share-home binds, when it carries anything. bwrap's --file
// writes through whatever is mounted at its path when it runs: it must
// come after the home's tmpfs and before any bind that could land at
// ~/.gitconfig, or it would write a file outside.
func (p *Plan) gitConfig(home string, g *HomeGitConfig) {
	p.GitConfig = g
	if g == nil || len(g.Carried) == 0 {
		return
	}
	p.Mounts = append(p.Mounts, Mount{Op: OpFile, FD: GitConfigFD, Dest: filepath.Join(home, GitConfigFile), Rule: RuleGitConfig,
		Why: "the user's git identity and harmless preferences, made from the user's git configuration by the allow-list (docs/policy.md): a file of the sandbox's own, which a `git config --global` inside changes and nothing outside reads"})
}

// explain is what `argv --explain` shows of the home's git configuration:
// each variable carried, where the user has it and why it may enter; how
// many stay out. Values are not shown: the output is for pasting into a
// report, and an address is personal.
func (g *HomeGitConfig) explain() []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, k := range g.Carried {
		out = append(out, fmt.Sprintf("git-config %s from %s:%d: %s", k.Name, k.File, k.Line, k.Why))
	}
	if g.LeftOut > 0 {
		out = append(out, fmt.Sprintf("git-config left out: %d of the variables in %s (not on the allow-list)", g.LeftOut, strings.Join(g.Files, ", ")))
	}
	return out
}

// FileContents are what bwrap reads for the files the plan makes (OpFile),
// by descriptor.
func (p *Plan) FileContents() map[int][]byte {
	out := map[int][]byte{}
	for _, m := range p.Mounts {
		switch {
		case m.Op == OpFile && m.FD == GitConfigFD && p.GitConfig != nil:
			out[m.FD] = p.GitConfig.Data
		case m.Op == OpFile && m.FD == ForgeCAFD:
			out[m.FD] = p.ForgeBundle
		}
	}
	return out
}
