// What git's configuration names, held: the system's, the user's and every
// repository's own, with their includes (find_git.go finds the
// repositories).

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/gitconfig"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// readConfigs reads the system and global configuration and every git
// directory's, with their includes, and holds what they name: the
// included files, the hooks directories, the files their commands run.
func (s *gitScan) readConfigs(env launchenv.Env) error {
	for _, f := range sharedConfigs(env, s.home) {
		entries, err := s.load(f, true)
		if err != nil {
			return err
		}
		s.entries = append(s.entries, entries...)
	}
	own, err := s.ownConfigs()
	if err != nil {
		return err
	}
	var all []string // every working tree, for the system's and user's values
	for _, g := range s.order {
		all = append(all, g.bases()...)
	}
	for _, e := range s.entries {
		s.named(e, all)
	}
	for _, g := range s.order {
		for _, e := range own[g] {
			s.named(e, g.bases())
		}
	}
	return errors.Join(s.refused...)
}

// sharedConfigs are the system's and the user's configuration files, which
// apply to every repository, in git's order.
func sharedConfigs(env launchenv.Env, home string) []string {
	var shared []string
	if p, ok := env.Lookup("GIT_CONFIG_SYSTEM"); ok && filepath.IsAbs(p) {
		shared = append(shared, p)
	}
	shared = append(shared, "/etc/gitconfig")
	if p, ok := env.Lookup("GIT_CONFIG_GLOBAL"); ok && filepath.IsAbs(p) {
		shared = append(shared, p)
	}
	if x, ok := env.Lookup("XDG_CONFIG_HOME"); ok && filepath.IsAbs(x) {
		shared = append(shared, filepath.Join(x, "git/config"))
	}
	return append(shared, filepath.Join(home, ".config/git/config"), filepath.Join(home, ".gitconfig"))
}

// ownConfigs reads every repository's own configuration, and takes its
// core.worktree first, since the other values are resolved against the
// working trees.
func (s *gitScan) ownConfigs() (map[*gitDir][]gitconfig.Entry, error) {
	own := map[*gitDir][]gitconfig.Entry{}
	for _, g := range s.order {
		for _, name := range []string{"config", "config.worktree"} {
			entries, err := s.load(filepath.Join(g.path, name), false)
			if err != nil {
				return nil, err
			}
			own[g] = append(own[g], entries...)
			for _, e := range entries {
				g.addWorktreeOf(e)
			}
		}
	}
	return own, nil
}

// addWorktreeOf adds the working tree a core.worktree entry names.
func (g *gitDir) addWorktreeOf(e gitconfig.Entry) {
	if e.Kind() != gitconfig.Worktree || e.NoValue || e.Value == "" {
		return
	}
	w := e.Value
	if !filepath.IsAbs(w) {
		w = filepath.Join(g.path, w)
	}
	g.addWorktree(filepath.Clean(w))
}

// bases are the directories a repository's relative values are taken
// from: its working trees, or the git directory itself when it has none
// (a bare repository, whose hooks run there).
func (g *gitDir) bases() []string {
	if len(g.worktrees) == 0 {
		return []string{g.path}
	}
	return g.worktrees
}

// load reads a config file and its includes, and holds the included
// files, and the file itself when self is set (a git directory's own are
// held with the directory's entries). Files outside the roots are dropped
// later: the sandbox cannot write them anyway.
func (s *gitScan) load(path string, self bool) ([]gitconfig.Entry, error) {
	from := path
	if s.inSandbox && path == filepath.Join(s.common, "config") && exists(layout.InsideRepoConfig) {
		// Inside, the repository's own name leads to the sandbox's copy;
		// the launch read the real one, which the launcher keeps here.
		from = layout.InsideRepoConfig
	}
	entries, files, err := gitconfig.LoadFrom(path, from, s.home)
	if err != nil {
		return nil, err
	}
	for i, f := range files {
		if i > 0 || self {
			s.holds = append(s.holds, hold{path: f.Path, why: whyIncluded})
		}
	}
	return entries, nil
}

// named holds what one configuration variable names: a hooks directory, a
// template directory, or the files in a command's words. Relative values
// are taken from each of bases.
func (s *gitScan) named(e gitconfig.Entry, bases []string) {
	if e.NoValue || e.Value == "" {
		return
	}
	why := fmt.Sprintf("named by %s (%s:%d), which git outside runs", e.Name, e.File, e.Line)
	switch e.Kind() {
	case gitconfig.HooksDir:
		for _, p := range s.resolve(e.Value, bases) {
			s.holds = append(s.holds, hold{path: p, dir: true, exact: true, why: whyHooks})
		}
	case gitconfig.TemplateDir:
		for _, p := range s.resolve(e.Value, bases) {
			s.holds = append(s.holds, hold{path: p, dir: true, why: why})
		}
	case gitconfig.Command:
		for _, w := range gitconfig.Words(e.Value) {
			s.commandWord(w, bases, why)
		}
		s.importDirs(e, bases, why)
		// A script is held missing or not, named with a directory or not:
		// sh x.sh reads ./x.sh.
		for _, w := range gitconfig.Scripts(e.Value) {
			for _, p := range s.resolve(w, bases) {
				s.holds = append(s.holds, hold{path: p, why: why})
			}
		}
		// Whatever a session put in the directory a program is picked in
		// could be the one that runs; never the base itself (a
		// repository's top), which stays writable.
		for _, dir := range gitconfig.ProgramDirs(e.Value) {
			for _, p := range s.resolve(dir, bases) {
				if !slices.Contains(bases, p) {
					s.holds = append(s.holds, hold{path: p, dir: true, why: why + ", which picks its program in it"})
				}
			}
		}
	}
}

// importDirs holds the directories a command that runs Python, Perl or
// Ruby loads modules from first (find_importdirs.go), or refuses one that is
// where git runs it: a repository's top, which stays writable.
func (s *gitScan) importDirs(e gitconfig.Entry, bases []string, why string) {
	lang, dirs := gitconfig.ImportDirs(e.Value)
	for _, d := range dirs {
		if strings.Contains(d, "$") {
			continue // computed: which one cannot be known
		}
		for _, p := range s.resolve(d, bases) {
			switch {
			case !s.writable(p):
			case slices.Contains(bases, p):
				s.refused = append(s.refused, importRefusal(fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Name), e.Value, lang, importDirName(d),
					"git outside runs it in the repository's top, "+p))
			default:
				s.holds = append(s.holds, hold{path: p, dir: true, why: why + ", which loads modules from it first"})
			}
		}
	}
}

// commandWord holds the file one word of a command names, if it names one.
func (s *gitScan) commandWord(w string, bases []string, why string) {
	if strings.ContainsAny(w, "$*?[=") || strings.Contains(w, "://") {
		return // expanded by the shell, an option (its value is a word of its own), or a URL
	}
	slash := strings.Contains(w, "/")
	for _, p := range s.resolve(w, bases) {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			// A directory is not run; the program in it is named by another word.
		case err == nil && fi.Mode().IsRegular(), slash:
			// A bare word is a program found on PATH, unless a file of that
			// name is where the command runs.
			s.holds = append(s.holds, hold{path: p, why: why})
		}
	}
}

// resolve turns a path value into absolute paths where the sandbox can
// write: "~/" is the home, a relative value is taken from each base.
func (s *gitScan) resolve(value string, bases []string) []string {
	v, ok := gitconfig.ExpandHome(value, s.home)
	if !ok || v == "" {
		return nil
	}
	var out []string
	if filepath.IsAbs(v) {
		out = []string{filepath.Clean(v)}
	} else {
		for _, b := range bases {
			out = append(out, filepath.Join(b, v))
		}
	}
	return out
}
