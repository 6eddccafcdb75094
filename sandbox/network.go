package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// Where the sandbox reaches the launcher's proxies in allowlist mode. The
// sandbox has its own network namespace, so fixed loopback ports are free.
const (
	EgressProxyAddr = "127.0.0.1:3128" // HTTP and CONNECT proxy, the only way out
	AuthProxyAddr   = "127.0.0.1:3129" // the credential proxy, Claude's ANTHROPIC_BASE_URL
)

// A Listener is a loopback socket init opens in the sandbox's network
// namespace and hands to the launcher over ControlFD, in the plan's
// order; the launcher serves Proxy on it.
type Listener struct {
	Addr  string
	Proxy Proxy
}

// Proxy is what the launcher serves on a Listener.
type Proxy string

const (
	EgressProxy     Proxy = "egress proxy"
	CredentialProxy Proxy = "credential proxy"
)

// CheckCredentialMode refuses a launch whose environment the credential
// proxy cannot serve.
func CheckCredentialMode(c *Conf, env launchenv.Env) error {
	if c.CredentialMode() != CredentialsProxy {
		return nil
	}
	for _, v := range cloudVars {
		if val, ok := env.Lookup(v); ok && val != "" && val != "0" {
			return fmt.Errorf("%s is set, but the credential proxy serves only Anthropic's API; set credentials = inside in %s to use a cloud provider", v, c.Source)
		}
	}
	return nil
}

// EgressPolicy is what the allowlist proxy lets through: the admin's lines,
// and Claude's own hosts when its login is inside the sandbox.
func EgressPolicy(c *Conf, env launchenv.Env, authProxied bool) (*hostaddr.Allowlist, error) {
	p, err := adminAllowlist(c)
	if err != nil || authProxied {
		return p, err
	}
	for _, h := range claudeHosts {
		p.Domains = append(p.Domains, hostaddr.Domain{Host: h, Port: 443})
	}
	u, err := env.BaseURL()
	if err != nil {
		return nil, err
	}
	if u != nil {
		if dom, err := hostaddr.ParseDomain(launchenv.HostPort(u)); err == nil {
			p.Domains = append(p.Domains, dom)
		}
	}
	return p, nil
}

// adminAllowlist is what the conf's allow-domain, allow-preset and
// allow-ip lines let through.
func adminAllowlist(c *Conf) (*hostaddr.Allowlist, error) {
	p := &hostaddr.Allowlist{}
	for _, d := range c.AllowDomain {
		dom, err := hostaddr.ParseDomain(d.Value)
		if err != nil {
			return nil, &ConfError{File: c.Source, Line: d.Line, Msg: fmt.Sprintf("allow-domain: %q: %v", d.Value, err)}
		}
		p.Domains = append(p.Domains, dom)
	}
	for _, l := range c.AllowPreset {
		presets, err := hostaddr.ParsePresets(l.Value)
		if err != nil {
			return nil, &ConfError{File: c.Source, Line: l.Line, Msg: "allow-preset: " + err.Error()}
		}
		for _, pre := range presets {
			p.Domains = append(p.Domains, pre.Domains()...)
		}
	}
	for _, a := range c.AllowIP {
		pfx, err := hostaddr.ParseIP(a.Value)
		if err != nil {
			return nil, &ConfError{File: c.Source, Line: a.Line, Msg: fmt.Sprintf("allow-ip: %q: %v", a.Value, err)}
		}
		p.IPs = append(p.IPs, pfx)
	}
	hosts, err := ForgeHosts(c)
	if err != nil {
		return nil, err
	}
	forgeEgress(p, hosts)
	return p, nil
}

// network adds the cover of the login (when the credentials file exists)
// and the proxy environment to the plan, and returns what init must open
// inside. env holds the variables passed from the caller by name; the
// entries set here replace theirs.
func network(plan *Plan, c *Conf, l Launch, env map[string]EnvVar, credentials bool) (listen []Listener) {
	if l.AuthToken != "" {
		for _, v := range credentialVars {
			delete(env, v)
		}
		if credentials {
			plan.add(OpRoBind, "/dev/null", filepath.Join(l.Home, layout.CredentialsFile), RuleCredentialsFile, "Claude Code's login: with credentials = proxy it stays outside, where the launcher's credential proxy adds it to Claude's requests")
		}
		addr := l.AuthAddr
		if c.NetworkMode() == NetworkAllowlist {
			addr = AuthProxyAddr
		}
		env["ANTHROPIC_BASE_URL"] = launcherVar("ANTHROPIC_BASE_URL", "http://"+addr, "the launcher's credential proxy, which adds the login outside the sandbox")
		token := launcherVar("ANTHROPIC_AUTH_TOKEN", l.AuthToken, "a session token, which only the launcher's credential proxy accepts")
		token.Shown = ShownSessionToken
		env["ANTHROPIC_AUTH_TOKEN"] = token
	}
	if c.NetworkMode() != NetworkAllowlist {
		if l.AuthToken != "" {
			noProxyLoopback(env)
		}
		return nil
	}
	proxy := "http://" + EgressProxyAddr
	for _, n := range proxyVars {
		env[n] = launcherVar(n, proxy, "the launcher's egress proxy, the one way out")
	}
	for _, n := range allProxyVars {
		delete(env, n)
	}
	for _, n := range noProxyVars {
		env[n] = launcherVar(n, "127.0.0.1,localhost,::1", "the sandbox's own loopback, where no proxy is needed")
	}
	env["NODE_USE_ENV_PROXY"] = launcherVar("NODE_USE_ENV_PROXY", "1", "Node 24's fetch honours the proxy variables only when asked to")
	env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = launcherVar("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1", "telemetry and error reports would only be refused and logged")
	listen = []Listener{{EgressProxyAddr, EgressProxy}}
	if l.AuthToken != "" {
		listen = append(listen, Listener{AuthProxyAddr, CredentialProxy})
	}
	return listen
}

// noProxyLoopback keeps the caller's proxy from being asked for the
// launcher's credential proxy on loopback, in open mode.
func noProxyLoopback(env map[string]EnvVar) {
	const why = "the caller's proxy must not be asked for the credential proxy on loopback"
	for _, n := range noProxyVars {
		old, ok := env[n]
		switch {
		case !ok || old.Value == "":
			env[n] = launcherVar(n, "127.0.0.1", why)
		case !slices.Contains(strings.Split(old.Value, ","), "127.0.0.1"):
			old.Value, old.Shown, old.Why = old.Value+",127.0.0.1", old.Shown+",127.0.0.1", old.Why+", and 127.0.0.1 added: "+why
			env[n] = old
		}
	}
}

func isLink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// SocketHelperArg runs init as the warden's socket helper; verify knows
// the helper by it.
const SocketHelperArg = "--socket-helper"

// InitCommand is what bwrap runs: init opens the listeners, installs the
// warden's filter, hands both out, and execs Claude.
func InitCommand(listen []Listener, private, claude []string) []string {
	cmd := []string{layout.InitPath, "init"}
	for _, l := range listen {
		cmd = append(cmd, "--listen", l.Addr)
	}
	for _, d := range private {
		cmd = append(cmd, "--private", d)
	}
	return append(append(cmd, "--"), claude...)
}

// AllowlistSummary says what the allowlist proxy lets through under the
// conf, for doctor and verify: the presets by name, with their hosts
// counted, and the number of allow-domain and allow-ip lines. Values the
// parser would refuse are not counted.
func (c *Conf) AllowlistSummary() string {
	if c.NetworkMode() != NetworkAllowlist {
		return "none: network = " + c.NetworkMode()
	}
	var names []string
	hosts := 0
	for _, l := range c.AllowPreset {
		presets, _ := hostaddr.ParsePresets(l.Value)
		for _, p := range presets {
			if !slices.Contains(names, p.Name) {
				names = append(names, p.Name)
				hosts += len(p.Hosts)
			}
		}
	}
	presets := "no allow-preset"
	if len(names) > 0 {
		presets = fmt.Sprintf("allow-preset %s (%d hosts)", strings.Join(names, ", "), hosts)
	}
	return fmt.Sprintf("%s, %d allow-domain, %d allow-ip, besides Claude Code's own connection", presets, len(c.AllowDomain), len(c.AllowIP))
}
