package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/gitconfig"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/google/go-cmp/cmp"
)

// TestGitConfigCarried: the allow-list carries the identity and git's own
// preferences, and nothing that runs a program, holds a secret or points
// git at a file, a URL or another configuration; a subsection's case
// counts, as it does for git.
func TestGitConfigCarried(t *testing.T) {
	for _, name := range []string{
		"user.name", "user.email", "init.defaultbranch", "core.autocrlf", "core.eol", "pull.rebase",
		"push.default", "merge.conflictstyle", "diff.algorithm", "color.ui", "color.diff.meta",
		"advice.detachedhead", "protocol.file.allow", "protocol.https.allow",
	} {
		if _, ok := GitConfigCarried(name); !ok {
			t.Errorf("%s is not carried", name)
		}
	}
	for _, name := range []string{
		"user.signingkey", "commit.gpgsign", "tag.gpgsign", "gpg.program", "gpg.format", "gpg.ssh.program",
		"core.hookspath", "core.fsmonitor", "core.sshcommand", "core.pager", "core.editor", "core.askpass",
		"core.excludesfile", "core.attributesfile", "core.worktree", "init.templatedir", "commit.template",
		"alias.x", "pager.log", "credential.helper", "credential.https://example.com.helper",
		"url.https://x:token@example.com/.insteadof", "http.extraheader", "http.https://example.com/.extraheader",
		"include.path", "includeif.gitdir:~/w/.path", "protocol.ext.allow", "protocol.allow", "protocol.FILE.allow",
		"protocol.fd.allow", "safe.directory", "diff.external", "diff.pdf.textconv", "filter.lfs.smudge",
		"merge.tool", "merge.x.driver", "submodule.x.update", "remote.origin.url", "remote.origin.uploadpack",
		"sendemail.smtppass", "github.token", "rerere.enabled", "user", "color",
	} {
		if _, ok := GitConfigCarried(name); ok {
			t.Errorf("%s is carried", name)
		}
	}
}

// TestGitConfigCarriedRunsNothing: no name on the allow-list is one git
// runs, takes hooks or templates from, or includes (gitconfig.Kind).
func TestGitConfigCarriedRunsNothing(t *testing.T) {
	for _, g := range gitConfigCarried {
		for _, n := range g.names {
			if strings.HasSuffix(n, ".*") {
				continue
			}
			if k := (gitconfig.Entry{Name: strings.ToLower(n)}).Kind(); k != gitconfig.Other {
				t.Errorf("%s is of kind %d", n, k)
			}
			if _, ok := GitConfigCarried(strings.ToLower(n)); !ok {
				t.Errorf("%s, as git spells it, is not carried", n)
			}
		}
	}
}

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, s := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHomeGitConfig reads the user's files as git does (XDG, then
// ~/.gitconfig, include.path followed, includeIf not) and writes what the
// allow-list carries, and only that, in git's order.
func TestHomeGitConfig(t *testing.T) {
	home := t.TempDir()
	writeFiles(t, map[string]string{
		filepath.Join(home, ".config/git/config"): "[pull]\n\trebase = true\n[core]\n\thooksPath = /x\n",
		filepath.Join(home, ".gitconfig"): "[user]\n\tname = \"A \\\"B\\\"\"\n\temail = a@example.com\n[alias]\n\tx = !touch /tmp/p\n" +
			"[include]\n\tpath = more.inc\n[includeIf \"gitdir:~/w/\"]\n\tpath = work.inc\n[protocol \"ext\"]\n\tallow = always\n",
		filepath.Join(home, "more.inc"): "[init]\n\tdefaultBranch = main\n[credential]\n\thelper = store\n",
		filepath.Join(home, "work.inc"): "[user]\n\temail = work@example.com\n",
		filepath.Join(home, "other"):    "[user]\n\tname = Other\n",
	})
	l := Launch{Home: home}
	g, err := homeGitConfig(&Conf{}, l)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gitconfig.Parse("made", g.Data)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range got {
		lines = append(lines, e.Name+"="+e.Value)
	}
	want := []string{"pull.rebase=true", `user.name=A "B"`, "user.email=a@example.com", "init.defaultbranch=main"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("made (-want +got):\n%s", diff)
	}
	if g.LeftOut != 6 || len(g.Carried) != 4 || g.Carried[3].File != filepath.Join(home, "more.inc") || g.Carried[3].Line != 2 {
		t.Errorf("left out %d, carried %+v", g.LeftOut, g.Carried)
	}

	// GIT_CONFIG_GLOBAL alone, as git reads it; a relative one, nothing.
	l.Env = launchenv.Read([]string{"GIT_CONFIG_GLOBAL=" + filepath.Join(home, "other")})
	if g, err := homeGitConfig(&Conf{}, l); err != nil || string(g.Data) != "[user]\n\tname = \"Other\"\n" {
		t.Errorf("GIT_CONFIG_GLOBAL: %q, %v", g.Data, err)
	}
	l.Env = launchenv.Read([]string{"GIT_CONFIG_GLOBAL=other"})
	if g, err := homeGitConfig(&Conf{}, l); err != nil || len(g.Carried) != 0 || len(g.Files) != 0 {
		t.Errorf("relative GIT_CONFIG_GLOBAL: %+v, %v", g, err)
	}

	// share-home = .gitconfig: the user's own file, nothing made.
	l.Env = launchenv.Env{}
	if g, err := homeGitConfig(&Conf{ShareHome: []Line{{".gitconfig", 1}}}, l); g != nil || err != nil {
		t.Errorf("share-home = .gitconfig: %+v, %v", g, err)
	}

	// A file git refuses: an error naming it and the line.
	writeFiles(t, map[string]string{filepath.Join(home, "more.inc"): "[init\n"})
	if _, err := homeGitConfig(&Conf{}, l); err == nil || err.Error() != filepath.Join(home, "more.inc")+":1: bad git config line (git refuses this file too)" {
		t.Errorf("bad include: %v", err)
	}
}

// TestAssembleGitConfig: the home's git configuration is a file bwrap
// makes on the home's tmpfs from GitConfigFD, after the home's other
// parts and before the share-home binds, with git's permissions; the
// launcher hands bwrap its content on that descriptor.
func TestAssembleGitConfig(t *testing.T) {
	r := testResolved()
	r.gitConfig = &HomeGitConfig{Data: []byte("[user]\n\tname = \"u\"\n"), Carried: []CarriedKey{{Name: "user.name", File: "f", Line: 2, Why: "w"}}, LeftOut: 3, Files: []string{"f"}}
	c := testConf(t, "share-home = .config/gh\n")
	p := Assemble(c, SessionEnv{}, testLaunch(), r)
	lines := mountLines(p)
	i := slices.Index(lines, "git-config --file ~/.gitconfig")
	if i < 0 || lines[i-1] != "ide-locks --tmpfs ~/.claude/ide" || lines[i+1] != "share-home --ro-bind-try ~/.config/gh" {
		t.Errorf("mounts: %q", lines)
	}
	// Nothing before it is mounted at ~/.gitconfig or above but the home's
	// tmpfs (and the read-only root): --file writes through a bind.
	for _, m := range p.Mounts[:slices.IndexFunc(p.Mounts, func(m Mount) bool { return m.Op == OpFile })] {
		if dest := "/nonexistent/home/u/.gitconfig"; m.Dest != "/" && m.Rule != RuleHome && (m.Dest == dest || strings.HasPrefix(dest, m.Dest+"/")) {
			t.Errorf("%s %s %s comes before the file", m.Rule, m.Op, m.Dest)
		}
	}
	if !strings.Contains(strings.Join(p.BwrapArgs(), " "), "--perms 0644 --file 8 /nonexistent/home/u/.gitconfig --ro-bind-try") {
		t.Errorf("argv: %q", p.BwrapArgs())
	}
	if got := p.FileContents(); len(got) != 1 || string(got[GitConfigFD]) != string(r.gitConfig.Data) {
		t.Errorf("FileContents = %v", got)
	}
	explain := strings.Join(p.Explain(), "\n")
	for _, want := range []string{"\ngit-config user.name from f:2: w\n", "\ngit-config left out: 3 "} {
		if !strings.Contains(explain, want) {
			t.Errorf("Explain lacks %q", want)
		}
	}

	// Nothing carried: no file, and no descriptor read.
	r.gitConfig.Carried = nil
	p = Assemble(c, SessionEnv{}, testLaunch(), r)
	if slices.Contains(mountLines(p), "git-config --file ~/.gitconfig") || len(p.FileContents()) != 0 {
		t.Errorf("nothing carried, yet %q", mountLines(p))
	}
}
