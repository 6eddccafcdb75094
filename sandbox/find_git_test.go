package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/google/go-cmp/cmp"
)

// gitFixture is a workspace with every kind of repository git outside can
// enter: the top-level one, a nested clone, a submodule, a linked worktree;
// and a home whose git configuration includes a file from the workspace and
// names a relative hooks directory.
func gitFixture(t *testing.T) (ws, home string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is needed under CI=true")
		}
		t.Skip("SKIPPING: git is not installed")
	}
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	ws, home = filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	git := func(d string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", d, "-c", "protocol.file.allow=always"}, args...)...)
		cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "PATH=" + os.Getenv("PATH")}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{ws, home, filepath.Join(dir, "upstream")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git(filepath.Join(dir, "upstream"), "init", "-q", "--template=")
	git(filepath.Join(dir, "upstream"), "commit", "-q", "--allow-empty", "-m", "up")
	git(ws, "init", "-q", "--template=")
	git(ws, "commit", "-q", "--allow-empty", "-m", "top")
	git(ws, "submodule", "-q", "add", filepath.Join(dir, "upstream"), "sub")
	git(ws, "commit", "-q", "-m", "sub")
	git(ws, "worktree", "add", "-q", "wt")
	if err := os.MkdirAll(filepath.Join(ws, "vendor/lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(filepath.Join(ws, "vendor/lib"), "init", "-q", "--template=")
	write(filepath.Join(ws, "vendor/lib/.git/hooks/pre-commit"), "#!/bin/sh\n")
	write(filepath.Join(ws, "vendor/lib/.git/config"), "[core]\n\tbare = false\n[include]\n\tpath = ../../../inc/lib.inc\n")
	write(filepath.Join(ws, "team.gitconfig"), "[core]\n\tfsmonitor = ./tools/fsmon\n[alias]\n\tx = !sh run.sh && scripts/go.sh\n")
	write(filepath.Join(ws, "run.sh"), "")
	write(filepath.Join(home, ".gitconfig"), "[include]\n\tpath = "+ws+"/team.gitconfig\n[core]\n\thooksPath = .githooks\n")
	return ws, home
}

func TestProtectGit(t *testing.T) {
	ws, home := gitFixture(t)
	found, err := findEntries([]string{ws})
	if err != nil {
		t.Fatal(err)
	}
	git, err := protectGit(ws, []string{ws}, found, home, launchenv.Env{}, false)
	if err != nil {
		t.Fatal(err)
	}
	mounts, missing, err := protections([]string{ws}, git.holds)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range mounts {
		got = append(got, []string{"pin", "ro", "store", "copy"}[m.kind]+" "+strings.TrimPrefix(m.path, ws+"/"))
	}
	for _, r := range nameRules(mounts, append(missing, git.names...)) {
		why := map[string]string{whyGitDir: "git dir", whyGitFile: ".git file", whyIncluded: "included", whyHooks: "hooks"}[r.Why]
		if why == "" {
			why = r.Why[:strings.Index(r.Why, " (")]
		}
		got = append(got, "rule "+strings.TrimPrefix(r.Dir, ws)+": "+strings.Join(r.Names, " ")+" ("+why+")")
	}
	for _, r := range pathRules(mounts, missing) {
		got = append(got, "path "+strings.TrimPrefix(r.Path, ws))
	}
	for _, d := range git.dirs {
		var tops []string
		for _, top := range d.Tops {
			tops = append(tops, "/"+strings.TrimPrefix(strings.TrimPrefix(top, ws), "/"))
		}
		got = append(got, "index "+strings.TrimPrefix(d.Dir, ws+"/")+": used from "+strings.Join(tops, " "))
	}
	sort.Strings(got)
	// The workspace's own git directory, a nested clone's, the submodule's
	// and the linked worktree's .git files (their names refused too: a
	// program outside may replace them), what the user's configuration
	// includes and names, in every working tree (the script sh run.sh
	// reads there too, missing or not).
	want := []string{
		"path /.git/branches",
		"path /.git/commondir",
		"path /.git/config.worktree",
		"path /.git/fsmonitor--daemon",
		"path /.git/fsmonitor--daemon.ipc",
		"path /.git/hooks",
		"path /.git/rebase-apply",
		"path /.git/rebase-merge",
		"path /.git/remotes",
		"path /.git/sequencer",
		"path /.githooks",
		"path /inc/lib.inc",
		"path /scripts/go.sh",
		"path /sub/.githooks",
		"path /sub/run.sh",
		"path /sub/scripts/go.sh",
		"path /sub/tools/fsmon",
		"path /tools/fsmon",
		"path /vendor/lib/.git/branches",
		"path /vendor/lib/.git/commondir",
		"path /vendor/lib/.git/config.worktree",
		"path /vendor/lib/.git/fsmonitor--daemon",
		"path /vendor/lib/.git/fsmonitor--daemon.ipc",
		"path /vendor/lib/.git/modules",
		"path /vendor/lib/.git/rebase-apply",
		"path /vendor/lib/.git/rebase-merge",
		"path /vendor/lib/.git/remotes",
		"path /vendor/lib/.git/sequencer",
		"path /vendor/lib/.git/worktrees",
		"path /vendor/lib/.githooks",
		"path /vendor/lib/run.sh",
		"path /vendor/lib/scripts/go.sh",
		"path /vendor/lib/tools/fsmon",
		"path /wt/.githooks",
		"path /wt/run.sh",
		"path /wt/scripts/go.sh",
		"path /wt/tools/fsmon",
		"pin .git",
		"pin sub",
		"pin vendor",
		"pin vendor/lib",
		"pin vendor/lib/.git",
		"pin wt",
		"ro .git/modules/sub",
		"ro .git/worktrees/wt",
		"ro run.sh",
		"ro sub/.git",
		"ro team.gitconfig",
		"ro vendor/lib/.git/config",
		"ro vendor/lib/.git/hooks",
		"ro wt/.git",
		"rule /.git: branches commondir config config.worktree fsmonitor--daemon fsmonitor--daemon.ipc hooks modules rebase-apply rebase-merge remotes sequencer worktrees (git dir)",
		"rule /sub: .git (.git file)",
		"rule /sub: .githooks (hooks)",
		"rule /sub: run.sh (named by alias.x)",
		"rule /vendor/lib/.git: branches commondir config config.worktree fsmonitor--daemon fsmonitor--daemon.ipc hooks modules rebase-apply rebase-merge remotes sequencer worktrees (git dir)",
		"rule /vendor/lib: .githooks (hooks)",
		"rule /vendor/lib: run.sh (named by alias.x)",
		"rule /wt: .git (.git file)",
		"rule /wt: .githooks (hooks)",
		"rule /wt: run.sh (named by alias.x)",
		"rule : .githooks (hooks)",
		"rule : run.sh (named by alias.x)",
		"rule : team.gitconfig (included)",
		// Worktrees and submodules made inside go to the workspace's git
		// store, and the sandbox writes a copy of the configuration
		// (ADR 0034): the worktree and the submodule made outside are
		// bound back read-only.
		"rule /.git/worktrees: wt (git dir)",
		"rule /.git/modules: sub (git dir)",
		"store .claude/worktrees",
		"store .git/worktrees",
		"store .git/modules",
		"copy .git/config",
		// Every git directory's index is checked before it is renamed
		// into place, against the rules of the working trees it is used
		// from (ADR 0038); a common directory's against its linked
		// worktrees' too.
		"index .git: used from / /wt",
		"index .git/modules/sub: used from /sub",
		"index .git/worktrees/wt: used from /wt",
		"index vendor/lib/.git: used from /vendor/lib",
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("protections mismatch (-want +got):\n%s", diff)
	}
}

// listing is the mounts and NameRules of protectGit, one line each, paths relative to dir, rules' reasons cut
// short.
func listing(t *testing.T, dir, ws string, roots []string, home string, environ []string) ([]string, error) {
	t.Helper()
	found, err := findEntries(roots)
	if err != nil {
		t.Fatal(err)
	}
	git, err := protectGit(ws, roots, found, home, launchenv.Read(environ), false)
	if err != nil {
		return nil, err
	}
	mounts, missing, err := protections(roots, git.holds)
	if err != nil {
		return nil, err
	}
	var got []string
	for _, m := range mounts {
		got = append(got, []string{"pin", "ro", "store", "copy"}[m.kind]+" "+strings.TrimPrefix(m.path, dir+"/"))
	}
	for _, r := range nameRules(mounts, append(missing, git.names...)) {
		why := map[string]string{whyGitDir: "git dir", whyGitFile: ".git file", whyIncluded: "included", whyHooks: "hooks", whyCommon: "commondir"}[r.Why]
		if why == "" {
			why = r.Why[:strings.Index(r.Why, " (")]
		}
		if why == "git dir" {
			continue // the same names in every git directory
		}
		got = append(got, "rule "+strings.TrimPrefix(r.Dir, dir+"/")+": "+strings.Join(r.Names, " ")+" ("+why+")")
	}
	for _, r := range pathRules(mounts, missing) {
		if r.Why == whyGitDir {
			continue // the same names in every git directory
		}
		got = append(got, "path "+strings.TrimPrefix(r.Path, dir+"/"))
	}
	sort.Strings(got)
	return got, nil
}

func TestProtectGitCases(t *testing.T) {
	for _, tt := range []struct {
		name    string
		files   map[string]string // path under the test directory: content ("/" at the end: a directory, "->" at the start: a link)
		ws      string
		roots   []string
		environ []string
		want    []string
		err     string
	}{{
		name:  "a .git file whose git directory is in the workspace, with its common directory",
		files: map[string]string{"ws/.git": "gitdir: .bare/worktrees/main\n", "ws/.bare/worktrees/main/HEAD": "", "ws/.bare/worktrees/main/commondir": "../..\n", "ws/.bare/HEAD": "", "ws/.bare/config": "[core]\n"},
		want: []string{
			"copy ws/.bare/config",
			"pin ws/.bare",
			"ro ws/.bare/worktrees/main",
			"ro ws/.git",
			"rule ws: .git (.git file)",
			"store ws/.bare/modules",
			"store ws/.bare/worktrees",
			"store ws/.claude/worktrees",
		},
	}, {
		name:  "a nested .git file pointing to a missing directory",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "", "ws/lib/.git": "gitdir: ../.store/lib\n"},
		want: []string{
			"copy ws/.git/config",
			"path ws/.store/lib",
			"pin ws/.git",
			"pin ws/lib",
			"ro ws/lib/.git",
			"rule ws/lib: .git (.git file)",
			"store ws/.claude/worktrees",
			"store ws/.git/modules",
			"store ws/.git/worktrees",
		},
	}, {
		name:  "sequencer state of a nested repository",
		files: map[string]string{"ws/lib/.git/HEAD": "", "ws/lib/.git/config": "", "ws/lib/.git/rebase-merge/git-rebase-todo": "exec make\n", "ws/lib/.git/sequencer/todo": ""},
		want: []string{
			"pin ws/lib",
			"pin ws/lib/.git",
			"ro ws/lib/.git/config",
			"ro ws/lib/.git/rebase-merge",
			"ro ws/lib/.git/sequencer",
		},
	}, {
		name:  "a nested .git link",
		files: map[string]string{"ws/lib/.git": "->../store", "ws/store/HEAD": "", "ws/store/config": "[core]\n\thooksPath = h\n"},
		want: []string{
			"path ws/lib/h",
			"pin ws/lib",
			"pin ws/store",
			"ro ws/store/config",
			"rule ws/lib: h (hooks)",
		},
	}, {
		name:  "a command through a link",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "[core]\n\tfsmonitor = bin/fsmon\n", "ws/bin/fsmon": "->../tools/real", "ws/tools/real": ""},
		want: []string{
			"copy ws/.git/config",
			"pin ws/.git",
			"pin ws/bin",
			"pin ws/tools",
			"ro ws/tools/real",
			"rule ws/bin: fsmon (named by core.fsmonitor)",
			"rule ws/tools: real (named by core.fsmonitor)",
			"store ws/.claude/worktrees",
			"store ws/.git/modules",
			"store ws/.git/worktrees",
		},
	}, {
		name:  "a command in sh -c, a command under $HOME",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "[core]\n\tfsmonitor = sh -c 'cd x && tools/mon.sh --fast'\n[diff \"pdf\"]\n\ttextconv = \\\"$HOME\\\"/bin/pdf2txt\n", "ws/tools/mon.sh": "", "home/bin/pdf2txt": ""},
		roots: []string{"home"},
		want: []string{
			"copy ws/.git/config",
			"path home/.config/git/config",
			"path home/.gitconfig",
			"pin home/bin",
			"pin ws/.git",
			"pin ws/tools",
			"ro home/bin/pdf2txt",
			"ro ws/tools/mon.sh",
			"rule home/bin: pdf2txt (named by diff.pdf.textconv)",
			"rule home: .gitconfig (included)",
			"rule ws/tools: mon.sh (named by core.fsmonitor)",
			"store ws/.claude/worktrees",
			"store ws/.git/modules",
			"store ws/.git/worktrees",
		},
	}, {
		name:  "a command whose program the shell picks in a directory",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "[core]\n\tfsmonitor = tools/*.sh\n[alias]\n\tx = !run/$X\n\ty = !./*.sh\n\tz = !sh scripts/*.sh\n\tw = !cat args/*.txt\n", "ws/tools/a.sh": "", "ws/scripts/": "", "ws/args/": ""},
		want: []string{
			"copy ws/.git/config",
			"path ws/run",
			"pin ws/.git",
			"ro ws/scripts",
			"ro ws/tools",
			"rule ws: run (named by alias.x)",
			"rule ws: scripts (named by alias.z)",
			"rule ws: tools (named by core.fsmonitor)",
			"store ws/.claude/worktrees",
			"store ws/.git/modules",
			"store ws/.git/worktrees",
		},
	}, {
		name:  "a script named without a directory, missing or not",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "[alias]\n\tc = !bash check.sh\n[filter \"f\"]\n\tclean = python3 -P -u clean.py\n", "ws/clean.py": ""},
		want: []string{
			"copy ws/.git/config",
			"path ws/check.sh",
			"pin ws/.git",
			"ro ws/clean.py",
			"rule ws: check.sh (named by alias.c)",
			"rule ws: clean.py (named by filter.f.clean)",
			"store ws/.claude/worktrees",
			"store ws/.git/modules",
			"store ws/.git/worktrees",
		},
	}, {
		name:  "Python's first directories: a script's is held",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "[diff \"nb\"]\n\ttextconv = python3 tools/conv.py\n[alias]\n\tp = !PYTHONPATH=$HOME/lib:vendor python3 -P -m x\n", "ws/tools/conv.py": "", "ws/vendor/": "", "home/lib/": ""},
		roots: []string{"home"},
		want: []string{
			"copy ws/.git/config",
			"path home/.config/git/config",
			"path home/.gitconfig",
			"path home/lib:vendor",
			"pin ws/.git",
			"ro home/lib",
			"ro ws/tools",
			"ro ws/vendor",
			"rule home: .gitconfig (included)",
			"rule home: lib (named by alias.p)",
			"rule home: lib:vendor (named by alias.p)",
			"rule ws: tools (named by diff.nb.textconv)",
			"rule ws: vendor (named by alias.p)",
			"store ws/.claude/worktrees",
			"store ws/.git/modules",
			"store ws/.git/worktrees",
		},
	}, {
		name:  "Python run in a repository's top",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "[filter \"nb\"]\n\tclean = \"/usr/bin/python3\" -m nbstripout\n"},
		err:   `$DIR/ws/.git/config:2: filter.nb.clean: "/usr/bin/python3 -m nbstripout" runs Python with the directory it runs in first on its module path; git outside runs it in the repository's top, $DIR/ws, where a session could put a module that any import loads, the standard library's own included (json imports re); ` + pythonFix,
	}, {
		name:  "the repository above a workspace-root names files in it",
		files: map[string]string{"repo/.git/HEAD": "", "repo/.git/config": "[core]\n\thooksPath = ws/hooks\n[include]\n\tpath = ../ws/x.inc\n", "repo/ws/": ""},
		ws:    "repo/ws",
		want: []string{
			"path repo/ws/hooks",
			"path repo/ws/x.inc",
			"rule repo/ws: hooks (hooks)",
			"rule repo/ws: x.inc (included)",
		},
	}, {
		name:    "a global config named by GIT_CONFIG_GLOBAL, in the workspace",
		files:   map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "", "ws/.git/hooks/": "", "ws/.git/modules/": "", "ws/.git/worktrees/": "", "ws/.git/commondir": ".", "ws/my.gitconfig": "[core]\n\tpager = ./pager.sh\n"},
		environ: []string{"GIT_CONFIG_GLOBAL=$DIR/ws/my.gitconfig"},
		want: []string{
			"copy ws/.git/config",
			"path ws/pager.sh",
			"pin ws/.git",
			"ro ws/.git/commondir",
			"ro ws/.git/hooks",
			"ro ws/my.gitconfig",
			"rule ws: my.gitconfig (included)",
			"rule ws: pager.sh (named by core.pager)",
			"store ws/.claude/worktrees",
			"store ws/.git/modules",
			"store ws/.git/worktrees",
		},
	}, {
		name:  "a repository in an allow-write path",
		files: map[string]string{"ws/": "", "cache/dep/.git/HEAD": "", "cache/dep/.git/config": ""},
		roots: []string{"cache"},
		want: []string{
			"pin cache/dep",
			"pin cache/dep/.git",
			"ro cache/dep/.git/config",
		},
	}, {
		name: "a linked worktree outside the workspace includes a workspace file",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "", "ws/.git/hooks/": "", "ws/.git/modules/": "", "ws/.git/commondir": ".",
			"ws/.git/worktrees/wt/HEAD": "", "ws/.git/worktrees/wt/commondir": "../..", "ws/.git/worktrees/wt/gitdir": "../../../../elsewhere/wt/.git",
			"ws/.git/worktrees/wt/config.worktree": "[include]\n\tpath = ../../../wt.inc\n", "elsewhere/wt/.git": "gitdir: ../../ws/.git/worktrees/wt\n"},
		want: []string{
			"copy ws/.git/config",
			"path ws/wt.inc",
			"pin ws/.git",
			"ro ws/.git/commondir",
			"ro ws/.git/hooks",
			"ro ws/.git/worktrees/wt",
			"rule ws: wt.inc (included)",
			"store ws/.claude/worktrees",
			"store ws/.git/modules",
			"store ws/.git/worktrees",
		},
	}, {
		name: "a submodule not checked out includes a workspace file",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "", "ws/.git/hooks/": "", "ws/.git/worktrees/": "", "ws/.git/commondir": ".",
			"ws/.git/modules/lib/HEAD": "", "ws/.git/modules/lib/config": "[core]\n\tworktree = ../../../lib\n[include]\n\tpath = ../../../lib.inc\n[alias]\n\tx = !tools/x.sh\n"},
		// Its working tree, from core.worktree, is where its alias runs.
		want: []string{
			"copy ws/.git/config",
			"path ws/lib.inc",
			"path ws/lib/tools/x.sh",
			"pin ws/.git",
			"ro ws/.git/commondir",
			"ro ws/.git/hooks",
			"ro ws/.git/modules/lib",
			"rule ws: lib.inc (included)",
			"store ws/.claude/worktrees",
			"store ws/.git/modules",
			"store ws/.git/worktrees",
		},
	}, {
		// ADR 0034: a bind through a link would land where the link
		// leads; the path is held read-only instead.
		name:  "the workspace's .claude is a link: no store bound there",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "", "ws/.claude": "->../elsewhere", "elsewhere/worktrees/": ""},
		want: []string{
			"copy ws/.git/config",
			"pin ws/.git",
			"rule ws: .claude (the checkouts of Claude Code's worktrees)",
			"store ws/.git/modules",
			"store ws/.git/worktrees",
		},
	}, {
		name:  "the repository's worktrees is a file: held read-only",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "", "ws/.git/worktrees": "not a directory"},
		want: []string{
			"copy ws/.git/config",
			"pin ws/.git",
			"ro ws/.git/worktrees",
			"rule ws/.git: worktrees (git directories of worktrees made during the workspace's sessions, seen only inside: git outside never enters a worktree made there)",
			"store ws/.claude/worktrees",
			"store ws/.git/modules",
		},
	}, {
		name:  "Claude Code's worktrees made outside are bound back on the store, as they are",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "", "ws/.claude/worktrees/old/.git": "gitdir: ../../../.git/worktrees/old\n", "ws/.git/worktrees/old/HEAD": "", "ws/.git/worktrees/old/gitdir": "../../../.claude/worktrees/old/.git\n", "ws/.git/worktrees/old/commondir": "../..\n"},
		want: []string{
			"copy ws/.git/config",
			"pin ws/.claude",
			"pin ws/.claude/worktrees/old",
			"pin ws/.git",
			"ro ws/.claude/worktrees/old/.git",
			"ro ws/.git/worktrees/old",
			"rule ws/.claude/worktrees/old: .git (.git file)",
			"store ws/.claude/worktrees",
			"store ws/.git/modules",
			"store ws/.git/worktrees",
		},
	}, {
		name:  "a bad line in a nested repository's config",
		files: map[string]string{"ws/lib/.git/HEAD": "", "ws/lib/.git/config": "[core]\n\tfsmonitor = \"x\n"},
		err:   "$DIR/ws/lib/.git/config:2: bad git config line (git refuses this file too)",
	}, {
		name:  "a bad line in an included file",
		files: map[string]string{"ws/.git/HEAD": "", "ws/.git/config": "[include]\n\tpath = ../a.inc\n", "ws/a.inc": "[core\n"},
		err:   "$DIR/ws/a.inc:1: bad git config line (git refuses this file too)",
	}, {
		name:  "the workspace's .git file is not a gitdir link",
		files: map[string]string{"ws/.git": "nonsense\n"},
		err:   `$DIR/ws/.git is a file but not a "gitdir: PATH" link; the sandbox cannot tell which git directory to protect`,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			makeFiles(t, dir, tt.files)
			ws := filepath.Join(dir, "ws")
			if tt.ws != "" {
				ws = filepath.Join(dir, tt.ws)
			}
			roots := []string{ws}
			for _, r := range tt.roots {
				roots = append(roots, filepath.Join(dir, r))
			}
			var environ []string
			for _, e := range tt.environ {
				environ = append(environ, strings.ReplaceAll(e, "$DIR", dir))
			}
			got, err := listing(t, dir, ws, roots, filepath.Join(dir, "home"), environ)
			if tt.err != "" {
				if err == nil || err.Error() != strings.ReplaceAll(tt.err, "$DIR", dir) {
					t.Fatalf("got %v, want the error %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(tt.want)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// makeFiles makes files under dir: path: content, a path ending in "/" a
// directory, a content starting with "->" a link to the rest.
func makeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, p)
		err := os.MkdirAll(filepath.Dir(full), 0o755)
		switch {
		case err != nil:
		case strings.HasSuffix(p, "/"):
			err = os.MkdirAll(full, 0o755)
		case strings.HasPrefix(content, "->"):
			err = os.Symlink(strings.TrimPrefix(content, "->"), full)
		default:
			err = os.WriteFile(full, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
