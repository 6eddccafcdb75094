package cli

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/gitstore"
	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/termtext"
	"github.com/claude-sandbox/claude-sandbox/launcher"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// workspaceStore is the git store of the workspace a launch from here
// would have, and the paths its sessions can write (where their ".git"
// links are). The store is outside every sandbox: inside, it is refused.
func workspaceStore(name string, paths host.Paths, e env) (store gitstore.Store, roots []string, ok bool) {
	if host.Inside() {
		fmt.Fprintf(e.stderr, "claude-sandbox %s: run it outside the sandbox: the git store is outside every session's reach\n", name)
		return store, nil, false
	}
	pr, err := launcher.Prepare(paths, nil, e.launchEnv)
	if err != nil {
		launcher.PrintRefusal(e.stderr, err)
		return store, nil, false
	}
	store = gitstore.Store{Dir: pr.Plan.NameRules.GitStore.Dir, Binds: map[string]string{}}
	for _, m := range pr.Plan.Mounts {
		switch {
		case m.Rule == sandbox.RuleWorkspace || m.Rule == sandbox.RuleAllowWrite:
			roots = append(roots, m.Dest)
		case m.Rule == sandbox.RuleGitStore && m.Op == sandbox.OpBind && m.Source != store.Dir:
			store.Binds[m.Dest] = m.Source
		}
	}
	return store, roots, true
}

func reposCmd(fs *flag.FlagSet, e env) func([]string) int {
	paths := confFlag(fs, e)
	prune := fs.Bool("prune", false, "remove the repositories no .git link in the workspace leads to any more (their commits go with them)")
	return func([]string) int {
		store, roots, ok := workspaceStore("repos", paths(), e)
		if !ok {
			return host.ExitRefused
		}
		links, err := sandbox.GitStoreLinks(roots)
		if err == nil {
			var entries []gitstore.Entry
			if entries, err = gitstore.List(store.Dir, links); err == nil && *prune {
				entries, err = gitstore.Prune(store.Dir, entries)
				for _, g := range entries {
					fmt.Fprintln(e.stdout, termtext.Escape("removed "+g.Path))
				}
			} else if err == nil {
				for _, g := range entries {
					where := "no link leads here (--prune removes it)"
					if len(g.Links) > 0 {
						where = strings.Join(dirsOf(g.Links), " ")
					}
					kind := "repository"
					if !g.Dir {
						kind = "git file"
					}
					fmt.Fprintln(e.stdout, termtext.Escape(fmt.Sprintf("%s  %s  %s", where, kind, g.Path)))
				}
			}
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "claude-sandbox repos: %s\n", termtext.Escape(err.Error()))
			return 1
		}
		return 0
	}
}

// dirsOf are the directories of ".git" links: the working trees.
func dirsOf(links []string) []string {
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = filepath.Dir(l)
	}
	return out
}

func adoptCmd(fs *flag.FlagSet, e env) func([]string) int {
	paths := confFlag(fs, e)
	return func(dirs []string) int {
		store, _, ok := workspaceStore("adopt", paths(), e)
		if !ok {
			return host.ExitRefused
		}
		failed := 0
		for _, d := range dirs {
			dir, err := filepath.Abs(d)
			if err == nil {
				var a *gitstore.Adoption
				a, err = gitstore.Adopt(store, dir)
				if a != nil {
					a.Report(e.stdout)
				}
			}
			if err != nil {
				fmt.Fprintf(e.stderr, "claude-sandbox adopt: %s\n", termtext.Escape(err.Error()))
				failed++
			}
		}
		return min(failed, 1)
	}
}
