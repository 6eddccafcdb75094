package sandbox

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/forgeapi"
	"github.com/claude-sandbox/claude-sandbox/forgepush"
	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
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

	check func(value string) error // refuses a bad value; nil: any value
	// Where the value goes in a Conf: one of lines (a repeatable key),
	// value (a single one, and line where its line number goes, when the
	// policy names it) or flag. The parser puts values there and doctor
	// reads them back.
	lines func(*Conf) *[]Line
	value func(*Conf) *string
	line  func(*Conf) *int
	flag  func(*Conf) *bool
}

// confKeys is the conf's schema. The conf parser, the install and promote
// flags, the lines the installer stamps and the postCreate.sh install line
// are made from it; tests keep devcontainer-feature.json, the feature's
// install.sh and docs/configuration.md in step with it. The order is the
// order the installer stamps lines in.
//
// A new key is an entry here and the Conf field it puts its value in,
// which the policy reads; its row in docs/configuration.md; and, with a
// feature option, the option in devcontainer-feature.json (then `mage
// feature:sync`) and its line in install.sh. The tests name the key when
// one of those is missing.
var confKeys = []ConfKey{
	{
		Name: "workspace-root", Kind: KeySingle, Arg: "PATH", check: checkAbs,
		value: func(c *Conf) *string { return &c.WorkspaceRoot }, line: func(c *Conf) *int { return &c.workspaceLine },
	},
	{
		Name: "allow-write", Kind: KeyRepeatable, Arg: "PATH", check: checkAbs,
		lines:   func(c *Conf) *[]Line { return &c.AllowWrite },
		Feature: "allowWrite", FeatureHelp: "Comma-separated absolute paths the sandbox may write besides the workspace (conf allow-write), e.g. /srv/data. Paths whose contents run outside later (anything in a home, /opt, /var/cache, a repository or a virtualenv) are refused: see sandboxCache and allowWriteExecutable.",
	},
	{
		Name: "allow-write-executable", Kind: KeyRepeatable, Arg: "PATH", check: checkAbs,
		Help:    ": writable although what it holds runs outside the sandbox",
		lines:   func(c *Conf) *[]Line { return &c.AllowWriteExecutable },
		Feature: "allowWriteExecutable", FeatureHelp: "Comma-separated absolute paths the sandbox may write although what it writes there runs outside the sandbox later (conf allow-write-executable), e.g. /home/vscode/go/pkg/mod: the admin accepts that risk. Shells' rc files, .ssh, .config, .local/bin and .claude stay refused.",
	},
	{
		Name: "sandbox-cache", Kind: KeyRepeatable, Arg: "RELPATH", check: checkCache,
		Help:    ": a home directory kept between sessions, only the sandbox's",
		lines:   func(c *Conf) *[]Line { return &c.SandboxCache },
		Feature: "sandboxCache", FeatureHelp: "Comma-separated home-relative directories that keep their contents between sessions of a workspace, in a directory only the sandbox uses (conf sandbox-cache), e.g. go/pkg/mod,.cache/go-build,.npm,.cargo/registry,.cache/pip.",
	},
	{
		Name: "pass-env", Kind: KeyRepeatable, Arg: "NAME", check: checkPassEnv,
		lines:   func(c *Conf) *[]Line { return &c.PassEnv },
		Feature: "passEnv", FeatureHelp: "Comma-separated names of extra environment variables passed into the sandbox (conf pass-env). Names that change what runs (LD_*, NODE_OPTIONS, ...) are refused.",
	},
	{
		Name: "protect", Kind: KeyRepeatable, Arg: "RELPATH", check: checkRel,
		lines:   func(c *Conf) *[]Line { return &c.Protect },
		Feature: "protect", FeatureHelp: "Comma-separated workspace-relative paths kept read-only inside, on top of the defaults (.git/hooks, .git/config, .devcontainer, .vscode, ...). A trailing / marks a directory.",
	},
	{
		Name: "share-home", Kind: KeyRepeatable, Arg: "RELPATH", check: checkRel,
		lines: func(c *Conf) *[]Line { return &c.ShareHome },
	},
	{
		Name: "append-path", Kind: KeyRepeatable, Arg: "DIR", check: checkAppendPath,
		lines: func(c *Conf) *[]Line { return &c.AppendPath },
	},
	{
		Name: "no-forge", Kind: KeyFlag,
		flag:    func(c *Conf) *bool { return &c.NoForge },
		Feature: "noForge", FeatureHelp: "Never let forge tokens (GH_TOKEN, GITLAB_TOKEN, ...) or gh/glab config into the sandbox, even if passEnv names them.",
	},
	{
		// ADR 0011 gives the measurements behind the default.
		Name: "network", Kind: KeySingle, Arg: "MODE", Values: []string{NetworkOpen, NetworkAllowlist}, Default: NetworkAllowlist,
		value:   func(c *Conf) *string { return &c.Network },
		Feature: "network", FeatureHelp: "allowlist: the sandbox gets its own network namespace and reaches out only through a proxy outside it that lets through the domains in allowDomain (and Claude Code's own connection to Anthropic). open: the sandbox uses the container's network as it is (conf network).",
	},
	{
		Name: "allow-domain", Kind: KeyRepeatable, Arg: "HOST[:PORT]", check: quoted(hostaddr.ParseDomain),
		lines:   func(c *Conf) *[]Line { return &c.AllowDomain },
		Feature: "allowDomain", FeatureHelp: "Comma-separated HOST or HOST:PORT the allowlist proxy lets through (conf allow-domain), such as the package registries the team needs: registry.npmjs.org,proxy.golang.org,github.com. *.example.com is any subdomain of example.com, not example.com itself; without a port, HTTPS and plain http:// requests, but no tunnel to port 80 (HOST:80 opens one).",
	},
	{
		Name: "allow-preset", Kind: KeyRepeatable, Arg: "NAME[,NAME...]", check: checkPresets,
		Help:    ": the hosts one ecosystem's client reads packages from (" + strings.Join(hostaddr.PresetNames(), ", ") + ")",
		lines:   func(c *Conf) *[]Line { return &c.AllowPreset },
		Feature: "allowPreset", FeatureHelp: "Comma-separated presets the allowlist proxy lets through (conf allow-preset), each the hosts one ecosystem's standard client reads packages from: " + strings.Join(hostaddr.PresetNames(), ", ") + ". docs/network.md lists each preset's hosts.",
	},
	{
		Name: "allow-ip", Kind: KeyRepeatable, Arg: "IP|CIDR", check: quoted(hostaddr.ParseIP),
		lines:   func(c *Conf) *[]Line { return &c.AllowIP },
		Feature: "allowIp", FeatureHelp: "Comma-separated IPs or CIDRs the allowlist proxy may reach although they are loopback, private, link-local or cloud metadata, and that may be named as IP literals (conf allow-ip).",
	},
	{
		Name: "credentials", Kind: KeySingle, Arg: "MODE", Values: []string{CredentialsProxy, CredentialsInside}, Default: CredentialsProxy,
		value:   func(c *Conf) *string { return &c.Credentials },
		Feature: "credentials", FeatureHelp: "proxy: Claude Code's login stays outside the sandbox and a proxy outside adds it to API requests. inside: the login enters the sandbox, as Bedrock, Vertex or an apiKeyHelper need (conf credentials).",
	},
	{
		Name: "forge", Kind: KeyRepeatable, Arg: "HOST[:PORT]", check: checkForge,
		Help:    ": a forge whose credential the launcher adds to the sandbox's git and API requests, outside (network = allowlist)",
		lines:   func(c *Conf) *[]Line { return &c.Forge },
		Feature: "forge", FeatureHelp: "Comma-separated forges (HOST or HOST:PORT, e.g. github.com) whose credential the launcher finds outside (git credential fill as the user, or the GitHub Action's job token) and adds to the sandbox's git and API requests: the token never enters (conf forge). Needs network allowlist.",
	},
	{
		Name: "push-ref", Kind: KeyRepeatable, Arg: "PATTERN", check: checkPushPattern,
		Help:    ": a ref a push to a forge may create or update (default: every branch but the default one)",
		lines:   func(c *Conf) *[]Line { return &c.PushRef },
		Feature: "pushRef", FeatureHelp: "Comma-separated ref patterns a push to a forge named by forge may create or update (conf push-ref), e.g. refs/heads/claude/*; * is any run of characters, HEAD the repository's default branch, a leading ! takes refs away. Default: every branch but the default one (refs/heads/*,!HEAD).",
	},
	{
		Name: "push-delete", Kind: KeyRepeatable, Arg: "PATTERN", check: checkPushPattern,
		Help:    ": a ref a push to a forge may delete (default: none)",
		lines:   func(c *Conf) *[]Line { return &c.PushDelete },
		Feature: "pushDelete", FeatureHelp: "Comma-separated ref patterns a push to a forge may delete (conf push-delete), e.g. refs/heads/claude/*. Default: none.",
	},
	{
		Name: "push-force", Kind: KeyRepeatable, Arg: "PATTERN", check: checkPushPattern,
		Help:    ": a ref a push to a forge may move to a commit that does not descend from the old one (default: every branch but the default one)",
		lines:   func(c *Conf) *[]Line { return &c.PushForce },
		Feature: "pushForce", FeatureHelp: "Comma-separated ref patterns a push to a forge may force-push, moving them to a commit that does not descend from the old one (conf push-force); any other update is let through only when git outside proves it a fast-forward. Default: every branch but the default one (refs/heads/*,!HEAD); !refs/* for none.",
	},
	{
		Name: "forge-api", Kind: KeyRepeatable, Arg: "RULE", check: checkForgeAPIRule,
		Help:    ": a write a forge's API may be asked with the user's credential, METHOD /path/*/route or mutation NAME; ! takes one away (default: open and comment on issues and pull requests on api.github.com)",
		lines:   func(c *Conf) *[]Line { return &c.ForgeAPI },
		Feature: "forgeApi", FeatureHelp: "Comma-separated writes the sandbox may send a forge's API with the user's credential (conf forge-api): METHOD /path/*/route (a REST route, * one segment) or mutation NAME (a GraphQL mutation); a leading ! takes one away. Every read and git's own protocol go on without a rule. Default on api.github.com: open and comment on issues and pull requests; none elsewhere.",
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

// put puts a checked value of line n into c.
func (k ConfKey) put(c *Conf, v string, n int) {
	switch {
	case k.lines != nil:
		l := k.lines(c)
		*l = append(*l, Line{v, n})
	case k.value != nil:
		*k.value(c) = v
		if k.line != nil {
			*k.line(c) = n
		}
	case k.flag != nil:
		*k.flag(c) = true
	}
}

// stores says whether the key has somewhere to put its value.
func (k ConfKey) stores() bool { return k.lines != nil || k.value != nil || k.flag != nil }

// Summary is what the conf sets, key by key in the schema's order, for
// doctor: a repeatable key's number of lines, a single key's value (its
// default when it has no line), a flag's state.
func (c *Conf) Summary() string {
	var parts []string
	for _, k := range confKeys {
		switch {
		case k.lines != nil:
			parts = append(parts, fmt.Sprintf("%d %s", len(*k.lines(c)), k.Name))
		case k.flag != nil:
			parts = append(parts, fmt.Sprintf("%s=%v", k.Name, *k.flag(c)))
		case k.value != nil && (*k.value(c) != "" || k.Default != ""):
			parts = append(parts, k.Name+"="+cmp.Or(*k.value(c), k.Default))
		case k.value != nil:
			parts = append(parts, k.Name+" unset")
		}
	}
	return strings.Join(parts, ", ")
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
		if subtree.Of(p).Contains(rel) || subtree.Of(rel).Contains(p) {
			return fmt.Errorf("%q would hide ~/%s, which the sandbox binds itself", v, p)
		}
	}
	return nil
}

// checkPushPattern takes a ref pattern of the forge gate's.
func checkForgeAPIRule(v string) error {
	_, err := forgeapi.ParseRule(v)
	return err
}

func checkPushPattern(v string) error {
	_, err := forgepush.ParsePattern(v)
	return err
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
