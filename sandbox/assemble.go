package sandbox

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/namerule"
)

// Build checks the conf against this launch and returns the plan: Resolve,
// then Assemble.
func Build(c *Conf, s SessionEnv, l Launch) (*Plan, error) {
	r, err := Resolve(c, s, l)
	if err != nil {
		return nil, err
	}
	return Assemble(c, s, l, r), nil
}

// Assemble puts the plan together from the conf, the session's variables,
// the launch's facts and what Resolve found. It reads nothing, so a launch
// that learns a fact late (the credential proxy's port) assembles again at
// no cost.
func Assemble(c *Conf, s SessionEnv, l Launch, r *Resolved) *Plan {
	p := &Plan{Workspace: r.workspace, Namespaces: namespaces(c), Made: r.made}
	p.Private = p.system(l)
	p.gitStore(l, r)
	p.Private = append(p.Private, p.home(c, s, l, r))
	p.writable(c, r)
	p.background(l)
	// After every bind of the home (a share-home of .claude among them), so
	// that none lands on top of it.
	p.add(OpTmpfs, "", filepath.Join(l.Home, layout.KeptLoginDir), RuleKeptLogin, "the login the launcher keeps outside the sandbox: no session sees it by any name, in any mode, and a refreshed login is renamed in below this cover, which stays on (ADR 0039)")
	if l.OutsideSettings != "" {
		// Last, so that no bind lands on top of it.
		p.add(OpRoBind, l.InsideSettings, l.OutsideSettings, RuleInsideSettings,
			"the managed lock-down for a Claude Code started outside the sandbox, covered by the settings for sessions inside, which set none of it: they keep the user's hooks and MCP servers (ADR 0017), and skip the bypass-permissions warning (ADR 0023)")
	}
	p.Chdir, p.SeccompFD, p.StatusFD = l.Cwd, SeccompFD, StatusFD
	p.Seccomp = seccompFilter
	env := envFromCaller(c, c.NoForge || s.NoForge, l.Env)
	p.Listen = network(p, c, l, env, r.credentials)
	p.forge(c, r, env)
	p.Egress = r.egress
	names := make([]string, 0, len(env))
	for n := range env {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p.Env = append(p.Env, env[n])
	}
	p.Env = append(p.Env, launcherEnv(c, l)...)
	p.Env = append(p.Env, backgroundEnv(l)...)
	p.NameRules.Outside = outsideNames
	p.NameRules.InNamedDirs = namedDirs()
	p.NameRules.PrivateNetwork = p.privateNetwork()
	p.Claude = ClaudeCommand(filepath.Join(l.Home, ".local/bin/claude"), l.Args)
	if l.Background != nil && l.Background.Service {
		// Claude Code's own service, as Claude Code starts it on demand: a
		// transient one exits once no client is connected and no
		// background session runs, and the sandbox with it.
		p.Claude = []string{filepath.Join(l.Home, ".local/bin/claude"), "daemon", "run", "--origin", "transient"}
	}
	p.Command = InitCommand(p.Listen, p.Private, p.Claude)
	return p
}

// gitStore binds the workspace's git store where only the sandbox sees it
// (ADR 0034): a repository made during a session keeps its git directory
// there, so git outside, which finds a ".git" link leading nowhere, never
// obeys what the session wrote into it.
func (p *Plan) gitStore(l Launch, r *Resolved) {
	p.NameRules.GitStore = &namerule.GitStore{Dir: StateDir(l.Home, r.workspace, "git"), Inside: layout.InsideGitStore}
	p.add(OpBind, p.NameRules.GitStore.Dir, layout.InsideGitStore, RuleGitStore,
		"the git directories of repositories made during the workspace's sessions: a .git made where the outside sees it is a link here, a path that exists only inside, so git outside finds no repository there (ADR 0034)")
	p.NameRules.InsideOnly = append(p.NameRules.InsideOnly, layout.InsideGitStore)
}

// background adds, for a launch of background sessions, the directory of
// the service's sockets that the sandboxes of this user and workspace share,
// and the launcher bound where Claude Code inside starts what it starts from
// its own binary (CLAUDE_CODE_PROCESS_WRAPPER).
func (p *Plan) background(l Launch) {
	b := l.Background
	if b == nil {
		return
	}
	p.add(OpBind, b.SocketDir, DaemonSocketDir(b.UID), RuleBackground,
		"the background service's sockets, shared by the sandboxes of this user and workspace only: a directory the launcher made outside, which no other path inside reaches (ADR 0026)")
	p.add(OpRoBind, l.Launcher, layout.InsideWrapper, RuleBackground,
		"the launcher as Claude Code's process wrapper inside: it execs a Claude Code binary in this very sandbox, and nothing outside (ADR 0026)")
}

// backgroundEnv are the variables of a launch of background sessions: the
// wrapper inside, and which sandbox this is.
func backgroundEnv(l Launch) []EnvVar {
	b := l.Background
	if b == nil {
		return nil
	}
	role := "client"
	if b.Service {
		role = "service"
	}
	return []EnvVar{
		launcherVar("CLAUDE_CODE_PROCESS_WRAPPER", layout.InsideWrapper, "Claude Code starts its background service and sessions through it: inside, it execs within this sandbox (ADR 0026)"),
		launcherVar(BackgroundRoleVar, role, "the inside wrapper runs `claude daemon` only in the background service's own sandbox (ADR 0026)"),
	}
}

func (p *Plan) add(op Op, src, dest string, rule Rule, why string) {
	p.Mounts = append(p.Mounts, Mount{Op: op, Source: src, Dest: dest, Rule: rule, Why: why})
}

// namespaces are the sandbox's own: all but the network's always, the
// network's in allowlist mode.
func namespaces(c *Conf) []Namespace {
	ns := []Namespace{
		{UnshareUser, "capabilities only over the sandbox's own namespaces, none over the host's"},
		{UnshareIPC, "the host's System V IPC and POSIX message queues are out of reach"},
		{UnsharePID, "the host's processes can be neither seen nor signalled"},
		{UnshareUTS, "the host name the sandbox changes is its own"},
		{UnshareCgroupTry, "the host's cgroup tree is not shown, where the kernel has cgroup namespaces"},
	}
	if c.NetworkMode() == NetworkAllowlist {
		ns = append(ns, Namespace{UnshareNet, "network = allowlist: loopback only, and the launcher's egress proxy the one way out"})
	}
	return ns
}

// privateNetwork reports whether the sandbox has a network namespace of
// its own: then every abstract unix socket name it sees is its own.
func (p *Plan) privateNetwork() bool {
	for _, ns := range p.Namespaces {
		if ns.Unshare == UnshareNet {
			return true
		}
	}
	return false
}

// system adds the system's part: the host read-only, new /dev and /proc,
// the masks, the inside marker and init. It returns /dev (bwrap's tmpfs)
// and the masks, which are the sandbox's own file systems.
func (p *Plan) system(l Launch) []string {
	p.add(OpRoBind, "/", "/", RuleRoot, "the host's file system, read-only: its programs and libraries, nothing of them writable")
	p.add(OpDev, "", "/dev", RuleDev, "a new /dev: the harmless devices, a private /dev/shm, its own devpts; no disk or other hardware")
	p.add(OpProc, "", "/proc", RuleProc, "a new /proc of the sandbox's own processes: no other process's command line or environment")
	p.add(OpRoBind, "/proc/sys", "/proc/sys", RuleProcSys, "kernel settings are checked against the file's owner, not capabilities: a root session could otherwise set kernel.core_pattern to a program the host runs as root")
	private := []string{"/dev", "/run"}
	p.add(OpTmpfs, "", "/run", RuleMask, maskWhy("/run")+"; always, since the inside marker lives there")
	for _, d := range l.Masks {
		if d != "/run" {
			p.add(OpTmpfs, "", d, RuleMask, maskWhy(d))
			private = append(private, d)
		}
	}
	for _, f := range l.Keep {
		p.add(OpRoBind, f, f, RuleKeep, "a file under a mask that the system needs, bound back read-only (resolv.conf links into /run with systemd-resolved)")
	}
	p.add(OpDir, "", filepath.Dir(layout.InsideMarker), RuleInsideMarker, "the sandbox's own directory on its private /run")
	p.add(OpDir, "", layout.InsideMarker, RuleInsideMarker, "the marker only a sandbox has: a nested claude runs the real binary, the prompt gate lets prompts through (ADR 0003)")
	p.add(OpRoBind, l.Launcher, layout.InitPath, RuleInit, "the launcher's own binary, which runs first as init: it opens the proxies' sockets, starts the warden and runs Claude (ADR 0011, 0012)")
	return private
}

// home adds the private home and what is bound into it, and returns the
// home, a file system of the sandbox's own.
func (p *Plan) home(c *Conf, s SessionEnv, l Launch, r *Resolved) string {
	home := l.Home
	p.add(OpTmpfs, "", home, RuleHome, "an empty home: nothing of the real one (keys, tokens, rc files, history) but what is bound back below")
	p.add(OpRoBind, l.RealBinary, filepath.Join(home, ".local/bin/claude"), RuleRealBinary, "the real Claude Code, read-only where its self-check expects it")
	p.add(OpBind, filepath.Join(home, ".claude"), filepath.Join(home, ".claude"), RuleClaudeState, "Claude Code's sessions, history and state, kept between sessions")
	p.add(OpBind, filepath.Join(home, ".claude.json"), filepath.Join(home, ".claude.json"), RuleClaudeState, "Claude Code's state and the user's project settings, kept between sessions")
	for _, h := range readOnlyHome(home, r.commands) {
		path := filepath.Join(home, h.rel)
		p.add(OpRoBind, path, path, RuleClaudeReadOnly, h.why)
	}
	for _, h := range claudeOwnState {
		dir := StateDir(home, r.workspace, h.rel)
		p.add(OpBind, dir, filepath.Join(home, h.rel), RuleClaudeOwnState, h.why+"; inside, the workspace's own directory, never the one a Claude Code outside reads (ADR 0027)")
	}
	p.add(OpTmpfs, "", filepath.Join(home, ".claude/ide"), RuleIDELocks, "the IDE extension's lock files hold the port and token of a websocket whose tools run outside the sandbox")
	p.gitConfig(home, r.gitConfig)
	noForge := c.NoForge || s.NoForge
	for _, sh := range c.ShareHome {
		rel := strings.TrimSuffix(sh.Value, "/")
		if noForge && underAny(rel, forgeHome) {
			continue
		}
		path := filepath.Join(home, rel)
		p.add(OpRoBindTry, path, path, RuleShareHome, fmt.Sprintf("share-home = %s in %s:%d: read-only, when it exists", sh.Value, c.Source, sh.Line))
	}
	// Sandbox caches: home paths kept between sessions in a directory only
	// the sandbox uses (ADR 0013).
	for _, sc := range c.SandboxCache {
		dir := CacheDir(home, r.workspace, sc.Value)
		p.add(OpBind, dir, filepath.Join(home, strings.TrimSuffix(sc.Value, "/")), RuleSandboxCache,
			fmt.Sprintf("sandbox-cache = %s in %s:%d: the workspace's own directory, kept between its sessions, seen only inside (ADR 0013)", sc.Value, c.Source, sc.Line))
	}
	return home
}

// readOnlyHome are the paths below ~/.claude bound read-only: those of
// claudeReadOnly, and the files the user's settings name as commands.
func readOnlyHome(home string, commands []string) []homePath {
	out := append([]homePath{}, claudeReadOnly...)
	for _, p := range commands {
		rel, _ := filepath.Rel(home, p)
		why := "the user's Claude settings (~/.claude/settings.json, settings.local.json) name it in a command, which a Claude Code outside the sandbox runs too"
		if strings.HasSuffix(p, "/") {
			why = "the user's Claude settings (~/.claude/settings.json, settings.local.json) have a command whose program the shell picks in it, which a Claude Code outside the sandbox runs too: whatever a session put there could be the one that runs"
		}
		out = append(out, homePath{rel, why, !strings.HasSuffix(p, "/")})
	}
	return out
}

// writable adds what the sandbox can write besides its own file systems:
// the allow-write paths and the workspace, with their protections on top.
func (p *Plan) writable(c *Conf, r *Resolved) {
	for _, w := range r.writes {
		why := fmt.Sprintf("%s = %s in %s:%d", w.key, w.line.Value, c.Source, w.line.Line)
		if w.key == "allow-write-executable" {
			why += ": the admin accepts that what is written there runs outside the sandbox (ADR 0013)"
		}
		p.add(OpBind, w.path, w.path, RuleAllowWrite, why)
	}
	p.add(OpBind, r.workspace, r.workspace, RuleWorkspace, "the workspace, writable: "+r.workspaceWhy)
	for _, m := range r.held {
		switch m.kind {
		case pin:
			p.add(OpBind, m.path, m.path, RulePin, m.why)
		case readOnly:
			p.add(OpRoBind, m.path, m.path, RuleProtected, m.why)
		case storeBind:
			p.add(OpBind, m.source, m.path, RuleGitStore, m.why)
			p.NameRules.InsideOnly = append(p.NameRules.InsideOnly, m.path)
			if filepath.Base(m.source) == claudeWorktreesStore {
				p.NameRules.Checkouts = append(p.NameRules.Checkouts, m.path)
				p.NameRules.CheckoutNames = repositoryNames()
			}
		case storeCopy:
			p.add(OpBind, m.source, m.path, RuleGitStore, m.why)
			p.add(OpRoBind, m.source+launchCopy, layout.InsideRepoConfig, RuleGitStore,
				"the repository's configuration as this launch read it, for verify: inside, the repository's own name leads to the sandbox's copy")
			p.NameRules.CopyThrough = append(p.NameRules.CopyThrough, namerule.CopyThrough{Dir: filepath.Dir(m.path), Name: filepath.Base(m.path), Store: m.source, Launch: m.source + launchCopy})
		}
	}
	p.NameRules.Dirs, p.NameRules.Paths, p.NameRules.GitDirs = r.nameRules, r.pathRules, r.gitDirs
}

func launcherEnv(c *Conf, l Launch) []EnvVar {
	out := make([]EnvVar, 0, len(launcherVars))
	for _, v := range launcherVars {
		out = append(out, launcherVar(v.name, v.value(c, l), v.why))
	}
	return out
}

func launchPath(c *Conf, l Launch) string {
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, d := range c.AppendPath {
		path += ":" + d.Value
	}
	path += ":" + filepath.Join(l.Home, ".local/bin")
	if venv, ok := l.Env.Lookup("VIRTUAL_ENV"); ok && filepath.IsAbs(venv) && !strings.Contains(venv, ":") {
		path += ":" + filepath.Join(venv, "bin")
	}
	return path
}

func launcherVar(name, value, why string) EnvVar {
	return EnvVar{Name: name, Value: value, Shown: value, Source: FromLauncher, Why: why}
}

// envFromCaller is the allow-listed part of the caller's environment.
func envFromCaller(c *Conf, noForge bool, caller launchenv.Env) map[string]EnvVar {
	extra := map[string]Line{}
	for _, p := range c.PassEnv {
		extra[p.Value] = p
	}
	if noForge {
		for _, t := range forgeTokens {
			delete(extra, t)
		}
	}
	env := map[string]EnvVar{}
	for _, cv := range caller.Vars() {
		name := cv.Name
		if neverPassed(name) != "" {
			continue
		}
		v := EnvVar{Name: name, Value: cv.Value, Shown: ShownPassed, Source: FromCaller, Why: "the caller's: the allow list passes it"}
		line, named := extra[name]
		switch {
		case passedByDefault(name):
		case named:
			v.Source, v.Why = FromPassEnv, fmt.Sprintf("the caller's: pass-env = %s in %s:%d", name, c.Source, line.Line)
		default:
			continue
		}
		env[name] = v
	}
	return env
}
