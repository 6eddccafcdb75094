package sandbox

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
	"github.com/google/go-cmp/cmp"
)

// The assembly step reads nothing: every path here is made up, and none
// exists on the machine that runs the test.

func testLaunch() Launch {
	return Launch{User: "u", Home: "/nonexistent/home/u", Shell: "/bin/sh", Cwd: "/nonexistent/w/src",
		RealBinary: "/nonexistent/real-claude", Launcher: "/nonexistent/claude-sandbox", Masks: []string{"/run", "/tmp"}}
}

func testResolved() *Resolved {
	return &Resolved{workspace: "/nonexistent/w", workspaceWhy: "the test's"}
}

func testConf(t *testing.T, text string) *Conf {
	t.Helper()
	c, err := ParseConf("test.conf", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mountLines are "rule op dest" per mount, the home written as ~ and the
// workspace as W.
func mountLines(p *Plan) []string {
	var out []string
	for _, m := range p.Mounts {
		dest := strings.Replace(strings.Replace(m.Dest, "/nonexistent/home/u", "~", 1), "/nonexistent/w", "W", 1)
		out = append(out, fmt.Sprintf("%s %s %s", m.Rule, m.Op, dest))
	}
	return out
}

func TestAssembleMountOrder(t *testing.T) {
	r := testResolved()
	r.commands = []string{"/nonexistent/home/u/.claude/statusline.sh"}
	r.writes = []write{{path: "/nonexistent/cache", key: "allow-write", line: Line{"/nonexistent/cache", 3}}}
	r.held = []mount{
		{path: "/nonexistent/w/.git", kind: pin, why: whyPinGitDir},
		{path: "/nonexistent/w/.git/config", kind: readOnly, why: whyGitDir},
	}
	r.credentials = true
	l := testLaunch()
	l.Keep = []string{"/run/systemd/resolve/stub-resolv.conf"}
	l.OutsideSettings, l.InsideSettings = "/nonexistent/outside.json", "/nonexistent/inside.json"
	l.AuthToken = "claude-sandbox-session-x"
	c := testConf(t, "share-home = .gitconfig\nsandbox-cache = go/pkg/mod\n")
	got := mountLines(Assemble(c, SessionEnv{}, l, r))
	want := []string{
		"root --ro-bind /",
		"dev --dev /dev",
		"proc --proc /proc",
		"proc-sys --ro-bind /proc/sys",
		"mask --tmpfs /run",
		"mask --tmpfs /tmp",
		"keep --ro-bind /run/systemd/resolve/stub-resolv.conf",
		"inside-marker --dir /run/claude-sandbox",
		"inside-marker --dir /run/claude-sandbox/inside",
		"init --ro-bind /run/claude-sandbox/claude-sandbox",
		"git-store --bind /run/claude-sandbox/git",
		"home --tmpfs ~",
		"real-binary --ro-bind ~/.local/bin/claude",
		"claude-state --bind ~/.claude",
		"claude-state --bind ~/.claude.json",
		"claude-read-only --ro-bind ~/.claude/settings.json",
		"claude-read-only --ro-bind ~/.claude/settings.local.json",
		"claude-read-only --ro-bind ~/.claude/hooks",
		"claude-read-only --ro-bind ~/.claude/plugins",
		"claude-read-only --ro-bind ~/.claude/cowork_plugins",
		"claude-read-only --ro-bind ~/.claude/local",
		"claude-read-only --ro-bind ~/.claude/daemon.json",
		"claude-read-only --ro-bind ~/.claude/statusline.sh",
		"claude-own-state --bind ~/.claude/jobs",
		"claude-own-state --bind ~/.claude/daemon",
		"claude-own-state --bind ~/.claude/shell-snapshots",
		"claude-own-state --bind ~/.claude/session-env",
		"claude-own-state --bind ~/.claude/seed-admin",
		"claude-own-state --bind ~/.claude/rm-guard",
		"claude-own-state --bind ~/.claude/state",
		"ide-locks --tmpfs ~/.claude/ide",
		"share-home --ro-bind-try ~/.gitconfig",
		"sandbox-cache --bind ~/go/pkg/mod",
		"allow-write --bind /nonexistent/cache",
		"workspace --bind W",
		"pin --bind W/.git",
		"protected --ro-bind W/.git/config",
		"kept-login --tmpfs ~/.claude/claude-sandbox-login",
		"inside-settings --ro-bind /nonexistent/outside.json",
		"credentials-file --ro-bind ~/.claude/.credentials.json",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
}

// Every mount and variable says which rule made it and why.
func TestAssembleGivesReasons(t *testing.T) {
	r := testResolved()
	r.held = []mount{{path: "/nonexistent/w/.vscode", kind: readOnly, why: whyOr("")}}
	l := testLaunch()
	l.Env = launchenv.Read([]string{"TERM=xterm", "MY_VAR=1"})
	p := Assemble(testConf(t, "pass-env = MY_VAR\nshare-home = .gitconfig\n"), SessionEnv{}, l, r)
	for _, m := range p.Mounts {
		if m.Rule == "" || m.Why == "" || m.Dest == "" {
			t.Errorf("a mount without its rule, reason or destination: %+v", m)
		}
	}
	for _, ns := range p.Namespaces {
		if ns.Why == "" {
			t.Errorf("namespace %s has no reason", ns.Unshare)
		}
	}
	for _, v := range p.Env {
		if v.Source == "" || v.Why == "" {
			t.Errorf("variable %s has no source or reason", v.Name)
		}
	}
}

// What each conf key adds to the plan, and takes away, against the
// default conf.
func TestAssembleConfKeys(t *testing.T) {
	base := Assemble(testConf(t, ""), SessionEnv{}, testLaunch(), testResolved())
	for _, tt := range []struct {
		conf    string
		session SessionEnv
		environ []string
		added   []string // mounts as mountLines, variables as "env NAME=SHOWN (SOURCE)", namespaces as "ns OPTION"
		removed []string
	}{{
		conf:  "share-home = .gitconfig\nshare-home = .config/gh/\n",
		added: []string{"share-home --ro-bind-try ~/.gitconfig", "share-home --ro-bind-try ~/.config/gh"},
	}, {
		conf:  "share-home = .gitconfig\nshare-home = .config/gh/\nno-forge\n",
		added: []string{"share-home --ro-bind-try ~/.gitconfig"},
	}, {
		conf:    "share-home = .config/gh\n",
		session: SessionEnv{NoForge: true},
		added:   nil,
	}, {
		conf:  "sandbox-cache = go/pkg/mod/\n",
		added: []string{"sandbox-cache --bind ~/go/pkg/mod"},
	}, {
		conf:    "network = open\n",
		environ: []string{"HTTPS_PROXY=http://corp:3128"},
		added:   []string{"env HTTPS_PROXY=<passed> (caller)"},
		removed: []string{
			"ns --unshare-net",
			"env CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (launcher)", "env HTTPS_PROXY=http://127.0.0.1:3128 (launcher)",
			"env HTTP_PROXY=http://127.0.0.1:3128 (launcher)", "env NODE_USE_ENV_PROXY=1 (launcher)",
			"env NO_PROXY=127.0.0.1,localhost,::1 (launcher)", "env http_proxy=http://127.0.0.1:3128 (launcher)",
			"env https_proxy=http://127.0.0.1:3128 (launcher)", "env no_proxy=127.0.0.1,localhost,::1 (launcher)",
		},
	}, {
		conf:    "pass-env = MY_VAR\npass-env = GH_TOKEN\n",
		environ: []string{"MY_VAR=x", "GH_TOKEN=ghp", "OTHER=y"},
		added:   []string{"env GH_TOKEN=<passed> (pass-env)", "env MY_VAR=<passed> (pass-env)"},
	}, {
		conf:    "pass-env = MY_VAR\npass-env = GH_TOKEN\nno-forge\n",
		environ: []string{"MY_VAR=x", "GH_TOKEN=ghp"},
		added:   []string{"env MY_VAR=<passed> (pass-env)"},
	}, {
		conf:    "append-path = /opt/tool/bin\n",
		environ: []string{"VIRTUAL_ENV=/opt/venv"},
		added: []string{"env VIRTUAL_ENV=<passed> (caller)",
			"env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/tool/bin:/nonexistent/home/u/.local/bin:/opt/venv/bin (launcher)"},
		removed: []string{"env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/nonexistent/home/u/.local/bin (launcher)"},
	}} {
		l := testLaunch()
		l.Env = launchenv.Read(tt.environ)
		p := Assemble(testConf(t, tt.conf), tt.session, l, testResolved())
		added, removed := diffLines(planLines(base), planLines(p))
		if diff := cmp.Diff(tt.added, added); diff != "" {
			t.Errorf("%q: added (-want +got):\n%s", tt.conf, diff)
		}
		if diff := cmp.Diff(tt.removed, removed); diff != "" {
			t.Errorf("%q: removed (-want +got):\n%s", tt.conf, diff)
		}
	}
}

func planLines(p *Plan) []string {
	var out []string
	for _, ns := range p.Namespaces {
		out = append(out, "ns "+string(ns.Unshare))
	}
	out = append(out, mountLines(p)...)
	for _, v := range p.Env {
		out = append(out, fmt.Sprintf("env %s=%s (%s)", v.Name, v.Shown, v.Source))
	}
	return out
}

// diffLines returns the lines of b not in a, and of a not in b, each in
// their order.
func diffLines(a, b []string) (added, removed []string) {
	for _, l := range b {
		if !slices.Contains(a, l) {
			added = append(added, l)
		}
	}
	for _, l := range a {
		if !slices.Contains(b, l) {
			removed = append(removed, l)
		}
	}
	return added, removed
}

// The environment: where each variable comes from, what never enters, and
// the launcher's own last, whatever the caller set.
func TestAssembleEnvSources(t *testing.T) {
	l := testLaunch()
	l.Env = launchenv.Read([]string{"TERM=xterm", "LC_ALL=C", "MY_VAR=1", "SECRET=x", "LD_PRELOAD=/evil.so", "HOME=/elsewhere", "IS_SANDBOX=0", "ANTHROPIC_MODEL=m"})
	p := Assemble(testConf(t, "network = open\npass-env = MY_VAR\n"), SessionEnv{}, l, testResolved())
	var got []string
	for _, v := range p.Env {
		got = append(got, fmt.Sprintf("%s=%s (%s)", v.Name, v.Value, v.Source))
	}
	want := []string{
		"ANTHROPIC_MODEL=m (caller)",
		"LC_ALL=C (caller)",
		"MY_VAR=1 (pass-env)",
		"TERM=xterm (caller)",
		"HOME=/nonexistent/home/u (launcher)",
		"USER=u (launcher)",
		"LOGNAME=u (launcher)",
		"SHELL=/bin/sh (launcher)",
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/nonexistent/home/u/.local/bin (launcher)",
		"IS_SANDBOX=1 (launcher)",
		"DISABLE_AUTOUPDATER=1 (launcher)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
}

// The redacted argv hides what the caller passed and the session token;
// the argv bwrap gets has the values.
func TestAssembleRedaction(t *testing.T) {
	l := testLaunch()
	l.Env = launchenv.Read([]string{"ANTHROPIC_API_KEY=sk-secret", "NO_PROXY=corp.example", "TERM=xterm"})
	l.AuthToken, l.AuthAddr = "claude-sandbox-session-secret", "127.0.0.1:41000"
	r := testResolved()
	r.credentials = true
	p := Assemble(testConf(t, "network = open\n"), SessionEnv{}, l, r)
	args, redacted := strings.Join(p.BwrapArgs(), " "), strings.Join(p.RedactedArgs(), " ")
	for _, want := range []string{
		"--setenv ANTHROPIC_AUTH_TOKEN claude-sandbox-session-secret",
		"--setenv ANTHROPIC_BASE_URL http://127.0.0.1:41000",
		"--setenv NO_PROXY corp.example,127.0.0.1",
		"--setenv TERM xterm",
		"--setenv no_proxy 127.0.0.1",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("the argv lacks %q:\n%s", want, args)
		}
	}
	for _, want := range []string{
		"--setenv ANTHROPIC_AUTH_TOKEN <session-token>",
		"--setenv ANTHROPIC_BASE_URL http://127.0.0.1:41000",
		"--setenv NO_PROXY <passed>,127.0.0.1",
		"--setenv TERM <passed>",
		"--setenv no_proxy 127.0.0.1",
	} {
		if !strings.Contains(redacted, want) {
			t.Errorf("the redacted argv lacks %q:\n%s", want, redacted)
		}
	}
	for _, secret := range []string{"sk-secret", "session-secret", "corp.example", "xterm"} {
		if strings.Contains(redacted, secret) {
			t.Errorf("the redacted argv shows %q:\n%s", secret, redacted)
		}
	}
	if strings.Contains(args, "ANTHROPIC_API_KEY") {
		t.Errorf("the login entered beside the credential proxy:\n%s", args)
	}
	// The options that are not mounts keep their place: the descriptors
	// before the login's cover, the network namespace after it.
	if !strings.Contains(args, "--json-status-fd 5 --ro-bind /dev/null /nonexistent/home/u/.claude/.credentials.json --setenv") {
		t.Errorf("the login's cover is not right after the descriptors:\n%s", args)
	}
}

// Assembling again with a late fact changes that fact's part only.
func TestAssembleAgain(t *testing.T) {
	l := testLaunch()
	l.AuthToken, l.AuthAddr = "claude-sandbox-session-x", "127.0.0.1:0"
	c, r := testConf(t, "network = open\n"), testResolved()
	first := Assemble(c, SessionEnv{}, l, r)
	l.AuthAddr = "127.0.0.1:41000"
	second := Assemble(c, SessionEnv{}, l, r)
	added, removed := diffLines(first.BwrapArgs(), second.BwrapArgs())
	if diff := cmp.Diff([]string{"http://127.0.0.1:41000"}, added); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"http://127.0.0.1:0"}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
}

// What the launcher sets, no conf line can pass: pass-env is refused, and
// the caller's value never enters beside the launcher's.
func TestLauncherVarsNeverPassed(t *testing.T) {
	l := testLaunch()
	var environ []string
	for _, v := range launcherEnv(testConf(t, ""), l) {
		if why := neverPassed(v.Name); why != "set by the launcher" {
			t.Errorf("%s, which the launcher sets, can be passed (neverPassed says %q)", v.Name, why)
		}
		environ = append(environ, v.Name+"=caller")
	}
	l.Env = launchenv.Read(environ)
	seen := map[string]bool{}
	for _, v := range Assemble(testConf(t, "network = open\n"), SessionEnv{}, l, testResolved()).Env {
		if seen[v.Name] || v.Value == "caller" {
			t.Errorf("%s is set twice, or to the caller's value", v.Name)
		}
		seen[v.Name] = true
	}
}

// TestNothingLandsOnTheKeptLogin: the kept login's cover comes after every
// mount that could bind its directory again, a share-home of ~/.claude or
// of the directory itself among them, in every credential mode: no later
// mount's destination is the directory or above it (ADR 0039). Red with
// the cover among the home's mounts.
func TestNothingLandsOnTheKeptLogin(t *testing.T) {
	kept := "/nonexistent/home/u/.claude/claude-sandbox-login"
	for _, conf := range []string{
		"share-home = .claude\n",
		"share-home = .claude/claude-sandbox-login\n",
		"share-home = .claude\ncredentials = inside\n",
	} {
		p := Assemble(testConf(t, conf), SessionEnv{}, testLaunch(), testResolved())
		i := slices.IndexFunc(p.Mounts, func(m Mount) bool { return m.Rule == RuleKeptLogin })
		if i < 0 || p.Mounts[i].Dest != kept || p.Mounts[i].Op != OpTmpfs {
			t.Fatalf("%q: no tmpfs on %s: %v", conf, kept, mountLines(p))
		}
		for _, m := range p.Mounts[i+1:] {
			if m.Dest == kept || strings.HasPrefix(kept, m.Dest+"/") {
				t.Errorf("%q: %s %s %s lands on the kept login's cover", conf, m.Rule, m.Op, m.Dest)
			}
		}
	}
}

// TestDoubledVariable: a variable the launching environment defines twice
// is read once, by the door's rule (the first definition): the PATH the
// launcher builds from VIRTUAL_ENV and the VIRTUAL_ENV it passes in are
// the same value (red with envFromCaller reading the list itself, last
// definition winning: /b/venv is passed while /a/venv/bin is on PATH).
func TestDoubledVariable(t *testing.T) {
	l := testLaunch()
	l.Env = launchenv.Read([]string{"VIRTUAL_ENV=/a/venv", "TERM=xterm", "VIRTUAL_ENV=/b/venv", "TERM=dumb"})
	p := Assemble(testConf(t, ""), SessionEnv{}, l, testResolved())
	got := map[string]string{}
	for _, v := range p.Env {
		got[v.Name] = v.Value
	}
	if got["VIRTUAL_ENV"] != "/a/venv" || !strings.HasSuffix(got["PATH"], ":/a/venv/bin") || got["TERM"] != "xterm" {
		t.Errorf("VIRTUAL_ENV=%q, PATH=%q, TERM=%q; want the first definitions, /a/venv with /a/venv/bin last on PATH, and xterm", got["VIRTUAL_ENV"], got["PATH"], got["TERM"])
	}
}

// TestAssembleNameRules: the plan states every rule on names in its one
// value: the outside names and named directories of every workspace, the
// name and path rules and git directories Resolve found, the git store
// and the mounts only the sandbox sees (a checkout's with the repository
// names), the copy bound through, and whether abstract socket names are
// the sandbox's own (a network namespace of its own: allowlist mode).
func TestAssembleNameRules(t *testing.T) {
	r := testResolved()
	r.nameRules = []namerule.InDir{{Dir: "/nonexistent/w/tools", Names: []string{"toolchain"}, Why: "a selector"}}
	r.pathRules = []namerule.Path{{Path: "/nonexistent/w/.vscode", Why: "a protected path"}}
	r.gitDirs = []namerule.GitDir{{Dir: "/nonexistent/w/.git", Tops: []string{"/nonexistent/w"}}}
	checkouts := StateDir("/nonexistent/home/u", "/nonexistent/w", claudeWorktreesStore)
	r.held = []mount{
		{path: "/nonexistent/w/.claude/worktrees", kind: storeBind, why: whyClaudeWorktrees, source: checkouts},
		{path: "/nonexistent/w/.git/config", kind: storeCopy, why: whyConfigCopy, source: "/nonexistent/store/config"},
	}
	got := Assemble(testConf(t, ""), SessionEnv{}, testLaunch(), r).NameRules
	want := namerule.Rules{
		Outside:     outsideNames,
		Dirs:        r.nameRules,
		Paths:       r.pathRules,
		InNamedDirs: namedDirs(),
		GitDirs:     r.gitDirs,
		GitStore:    &namerule.GitStore{Dir: StateDir("/nonexistent/home/u", "/nonexistent/w", "git"), Inside: layout.InsideGitStore},
		InsideOnly:  []string{layout.InsideGitStore, "/nonexistent/w/.claude/worktrees"},
		Checkouts:   []string{"/nonexistent/w/.claude/worktrees"}, CheckoutNames: repositoryNames(),
		CopyThrough:    []namerule.CopyThrough{{Dir: "/nonexistent/w/.git", Name: "config", Store: "/nonexistent/store/config", Launch: "/nonexistent/store/config" + launchCopy}},
		PrivateNetwork: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the plan's rules on names (-want +got):\n%s", diff)
	}
	if Assemble(testConf(t, "network = open\n"), SessionEnv{}, testLaunch(), testResolved()).NameRules.PrivateNetwork {
		t.Error("network = open: the plan says the abstract socket names are the sandbox's own")
	}
}
