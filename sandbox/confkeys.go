package sandbox

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
)

// KeyKind says how a conf key is written.
type KeyKind int

const (
	KeySingle     KeyKind = iota // key = VALUE, at most once
	KeyRepeatable                // key = VALUE, any number of times, in order
	KeyFlag                      // key, bare, at most once
	KeyRetired                   // refused, naming what to write instead
)

// ConfKey is one key of /etc/claude-sandbox.conf: how it is written and
// checked, where the parsed value goes, and how the install, promote and
// the devcontainer feature set it. Every key that is not retired has the
// install flag --NAME; a key with a feature option also has the promote
// flag --NAME, and the feature's install.sh passes the option to --NAME.
type ConfKey struct {
	Name string
	Kind KeyKind
	// Arg names the value in the flags' help: PATH, RELPATH, MODE, ...
	Arg string
	// Values are the modes a single-valued key takes, all others refused;
	// nil for a key whose check decides.
	Values []string
	// Default is what a single-valued key means without a line; "" when
	// the policy works it out (workspace-root) or the key has no value.
	Default string
	// Help is what the install flag's help says after the argument and
	// the modes.
	Help string
	// Feature is the devcontainer feature option that sets the key, "" for
	// none, and FeatureHelp its description in devcontainer-feature.json.
	Feature, FeatureHelp string
	// Why a retired key is refused, and the line to write Instead.
	Why, Instead string

	check func(value string) error           // refuses a bad value; nil: any value
	store func(c *Conf, value string, n int) // puts a checked value of line n into c
}

// confKeys is the conf's schema. The conf parser, the install and promote
// flags, the lines the installer stamps and the postCreate.sh install line
// are made from it; tests keep devcontainer-feature.json, the feature's
// install.sh and docs/configuration.md in step with it. The order is the
// order the installer stamps lines in.
//
// A new key is an entry here and the Conf field its store fills, which the
// policy reads; its row in docs/configuration.md; and, with a feature
// option, the option in devcontainer-feature.json (then `mage
// feature:sync`) and its line in install.sh. The tests name the key when
// one of those is missing.
var confKeys = []ConfKey{
	{
		Name: "workspace-root", Kind: KeySingle, Arg: "PATH", check: checkAbs,
		store: func(c *Conf, v string, n int) { c.WorkspaceRoot, c.workspaceLine = v, n },
	},
	{
		Name: "allow-write", Kind: KeyRepeatable, Arg: "PATH", check: checkAbs,
		store:   intoLines(func(c *Conf) *[]Line { return &c.AllowWrite }),
		Feature: "allowWrite", FeatureHelp: "Comma-separated absolute paths the sandbox may write besides the workspace (conf allow-write), e.g. /srv/data. Paths whose contents run outside later (anything in a home, /opt, /var/cache, a repository or a virtualenv) are refused: see sandboxCache and allowWriteExecutable.",
	},
	{
		Name: "allow-write-executable", Kind: KeyRepeatable, Arg: "PATH", check: checkAbs,
		Help:    ": writable although what it holds runs outside the sandbox",
		store:   intoLines(func(c *Conf) *[]Line { return &c.AllowWriteExecutable }),
		Feature: "allowWriteExecutable", FeatureHelp: "Comma-separated absolute paths the sandbox may write although what it writes there runs outside the sandbox later (conf allow-write-executable), e.g. /home/vscode/go/pkg/mod: the admin accepts that risk. Shells' rc files, .ssh, .config, .local/bin and .claude stay refused.",
	},
	{
		Name: "sandbox-cache", Kind: KeyRepeatable, Arg: "RELPATH", check: checkCache,
		Help:    ": a home directory kept between sessions, only the sandbox's",
		store:   intoLines(func(c *Conf) *[]Line { return &c.SandboxCache }),
		Feature: "sandboxCache", FeatureHelp: "Comma-separated home-relative directories that keep their contents between sessions of a workspace, in a directory only the sandbox uses (conf sandbox-cache), e.g. go/pkg/mod,.cache/go-build,.npm,.cargo/registry,.cache/pip.",
	},
	{
		Name: "pass-env", Kind: KeyRepeatable, Arg: "NAME", check: checkPassEnv,
		store:   intoLines(func(c *Conf) *[]Line { return &c.PassEnv }),
		Feature: "passEnv", FeatureHelp: "Comma-separated names of extra environment variables passed into the sandbox (conf pass-env). Names that change what runs (LD_*, NODE_OPTIONS, ...) are refused.",
	},
	{
		Name: "protect", Kind: KeyRepeatable, Arg: "RELPATH", check: checkRel,
		store:   intoLines(func(c *Conf) *[]Line { return &c.Protect }),
		Feature: "protect", FeatureHelp: "Comma-separated workspace-relative paths kept read-only inside, on top of the defaults (.git/hooks, .git/config, .devcontainer, .vscode, ...). A trailing / marks a directory.",
	},
	{
		Name: "share-home", Kind: KeyRepeatable, Arg: "RELPATH", check: checkRel,
		store: intoLines(func(c *Conf) *[]Line { return &c.ShareHome }),
	},
	{
		Name: "append-path", Kind: KeyRepeatable, Arg: "DIR", check: checkAppendPath,
		store: intoLines(func(c *Conf) *[]Line { return &c.AppendPath }),
	},
	{
		Name: "no-forge", Kind: KeyFlag,
		store:   func(c *Conf, _ string, _ int) { c.NoForge = true },
		Feature: "noForge", FeatureHelp: "Never let forge tokens (GH_TOKEN, GITLAB_TOKEN, ...) or gh/glab config into the sandbox, even if passEnv names them.",
	},
	{
		// ADR 0011 gives the measurements behind the default.
		Name: "network", Kind: KeySingle, Arg: "MODE", Values: []string{NetworkOpen, NetworkAllowlist}, Default: NetworkAllowlist,
		store:   intoValue(func(c *Conf) *string { return &c.Network }),
		Feature: "network", FeatureHelp: "allowlist: the sandbox gets its own network namespace and reaches out only through a proxy outside it that lets through the domains in allowDomain (and Claude Code's own connection to Anthropic). open: the sandbox uses the container's network as it is (conf network).",
	},
	{
		Name: "allow-domain", Kind: KeyRepeatable, Arg: "HOST[:PORT]", check: quoted(hostaddr.ParseDomain),
		store:   intoLines(func(c *Conf) *[]Line { return &c.AllowDomain }),
		Feature: "allowDomain", FeatureHelp: "Comma-separated HOST or HOST:PORT the allowlist proxy lets through (conf allow-domain), such as the package registries the team needs: registry.npmjs.org,proxy.golang.org,github.com. *.example.com is any subdomain of example.com, not example.com itself; without a port, HTTPS and plain http:// requests, but no tunnel to port 80 (HOST:80 opens one).",
	},
	{
		Name: "allow-preset", Kind: KeyRepeatable, Arg: "NAME[,NAME...]", check: checkPresets,
		Help:    ": the hosts one ecosystem's client reads packages from (" + strings.Join(hostaddr.PresetNames(), ", ") + ")",
		store:   intoLines(func(c *Conf) *[]Line { return &c.AllowPreset }),
		Feature: "allowPreset", FeatureHelp: "Comma-separated presets the allowlist proxy lets through (conf allow-preset), each the hosts one ecosystem's standard client reads packages from: " + strings.Join(hostaddr.PresetNames(), ", ") + ". docs/network.md lists each preset's hosts.",
	},
	{
		Name: "allow-ip", Kind: KeyRepeatable, Arg: "IP|CIDR", check: quoted(hostaddr.ParseIP),
		store:   intoLines(func(c *Conf) *[]Line { return &c.AllowIP }),
		Feature: "allowIp", FeatureHelp: "Comma-separated IPs or CIDRs the allowlist proxy may reach although they are loopback, private, link-local or cloud metadata, and that may be named as IP literals (conf allow-ip).",
	},
	{
		Name: "credentials", Kind: KeySingle, Arg: "MODE", Values: []string{CredentialsProxy, CredentialsInside}, Default: CredentialsProxy,
		store:   intoValue(func(c *Conf) *string { return &c.Credentials }),
		Feature: "credentials", FeatureHelp: "proxy: Claude Code's login stays outside the sandbox and a proxy outside adds it to API requests. inside: the login enters the sandbox, as Bedrock, Vertex or an apiKeyHelper need (conf credentials).",
	},
	{Name: "egress-jail", Kind: KeyRetired, Why: "is the predecessor's key", Instead: "network = allowlist"},
}

// ConfKeys is a copy of the conf's schema, in the order the installer
// stamps lines.
func ConfKeys() []ConfKey {
	keys := make([]ConfKey, len(confKeys))
	for i, k := range confKeys {
		keys[i] = k.clone()
	}
	return keys
}

// LookupConfKey finds a key of the schema by name.
func LookupConfKey(name string) (ConfKey, bool) {
	k, ok := lookupKey(name)
	return k.clone(), ok
}

func lookupKey(name string) (ConfKey, bool) {
	i := slices.IndexFunc(confKeys, func(k ConfKey) bool { return k.Name == name })
	if i < 0 {
		return ConfKey{}, false
	}
	return confKeys[i], true
}

// clone copies the key so no caller can change the schema through it.
func (k ConfKey) clone() ConfKey {
	k.Values = slices.Clone(k.Values)
	return k
}

// Once reports whether the key may be set only once, so the installer
// replaces its line instead of adding another.
func (k ConfKey) Once() bool { return k.Kind == KeySingle || k.Kind == KeyFlag }

// Check refuses a value the conf would refuse on a line of the key, with
// the message the parser gives after FILE:LINE.
func (k ConfKey) Check(value string) error {
	var err error
	switch {
	case len(k.Values) > 0 && !slices.Contains(k.Values, value):
		err = fmt.Errorf("%q is not a mode (%s)", value, strings.Join(k.Values, " or "))
	case k.check != nil:
		err = k.check(value)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", k.Name, err)
	}
	return nil
}

func intoLines(field func(*Conf) *[]Line) func(*Conf, string, int) {
	return func(c *Conf, v string, n int) {
		f := field(c)
		*f = append(*f, Line{v, n})
	}
}

func intoValue(field func(*Conf) *string) func(*Conf, string, int) {
	return func(c *Conf, v string, _ int) { *field(c) = v }
}

// quoted checks a value with one of the proxy's parsers, naming the value.
func quoted[T any](parse func(string) (T, error)) func(string) error {
	return func(v string) error {
		if _, err := parse(v); err != nil {
			return fmt.Errorf("%q: %w", v, err)
		}
		return nil
	}
}

// checkPresets accepts one preset name or several separated by commas.
func checkPresets(v string) error {
	_, err := hostaddr.ParsePresets(v)
	return err
}

func checkCache(v string) error {
	if err := checkRel(v); err != nil {
		return fmt.Errorf("%w (a directory in the home, such as go/pkg/mod)", err)
	}
	rel := strings.TrimSuffix(v, "/")
	for _, p := range claudeHome {
		if within(p, rel) || within(rel, p) {
			return fmt.Errorf("%q would hide ~/%s, which the sandbox binds itself", v, p)
		}
	}
	return nil
}

func checkAppendPath(v string) error {
	if err := checkAbs(v); err != nil {
		return err
	}
	if strings.Contains(v, ":") {
		return fmt.Errorf("%q contains ':'; give one directory per line", v)
	}
	return nil
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func checkPassEnv(v string) error {
	if !envNameRE.MatchString(v) {
		return fmt.Errorf("%q is not a variable name", v)
	}
	if why := neverPassed(v); why != "" {
		return fmt.Errorf("%s can never be passed into the sandbox (%s)", v, why)
	}
	return nil
}
