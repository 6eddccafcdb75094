package sandbox

import (
	"fmt"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// Variables passed from the launching environment without any conf line.
var (
	passedNames = map[string]bool{
		"TERM": true, "COLORTERM": true, "LANG": true, "TZ": true, "VIRTUAL_ENV": true,
		"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "ALL_PROXY": true,
		"http_proxy": true, "https_proxy": true, "no_proxy": true, "all_proxy": true,
	}
	passedPrefixes = []string{"LC_", "ANTHROPIC_", "CLAUDE_CODE_"}
)

// Names that change what runs (loaders, shells, interpreters, git). No conf
// line and no prefix rule can pass them, nor those the launcher sets
// (launcherVars).
var (
	neverNames = map[string]string{
		"BASH_ENV": "runs code in every shell", "ENV": "runs code in every shell",
		"PROMPT_COMMAND": "runs code in every shell", "PS4": "runs code in traced shells",
		"SHELLOPTS": "changes every shell", "BASHOPTS": "changes every shell", "IFS": "changes every shell",
		"CDPATH":       "changes every shell",
		"NODE_OPTIONS": "injects code into node", "NODE_PATH": "injects code into node",
		"PYTHONSTARTUP": "injects code into python", "PYTHONPATH": "injects code into python",
		"PYTHONHOME": "injects code into python", "PERL5OPT": "injects code into perl",
		"PERL5LIB": "injects code into perl", "RUBYOPT": "injects code into ruby", "RUBYLIB": "injects code into ruby",
		"GIT_EXEC_PATH": "changes what git runs", "GIT_ASKPASS": "changes what git runs",
		"GIT_PROXY_COMMAND": "changes what git runs", "GIT_EXTERNAL_DIFF": "changes what git runs",
		"GIT_PAGER": "changes what git runs", "GIT_EDITOR": "changes what git runs",
		"GIT_SEQUENCE_EDITOR": "changes what git runs", "GIT_TEMPLATE_DIR": "changes what git runs",
		"GIT_DIR": "changes which repository git uses", "GIT_WORK_TREE": "changes which repository git uses",
		"CLAUDE_CONFIG_DIR": "moves Claude's config out of the bound ~/.claude",
		"CLAUDE_CODE_PROCESS_WRAPPER": "names the program Claude Code starts its background service and relaunches through: " +
			"a caller's choice must not follow a session in; the launcher sets its own for background sessions (ADR 0023, 0026)",
	}
	neverPrefixes = map[string]string{
		"LD_":             "changes what the dynamic loader runs",
		"BASH_FUNC_":      "exports shell functions",
		"GIT_CONFIG":      "injects git configuration",
		"GIT_SSH":         "changes what git runs",
		"CLAUDE_SANDBOX_": "controls the launcher itself",
	}
)

// forgeTokens never enter when no-forge is set, even if pass-env names them.
var forgeTokens = []string{
	"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
	"GITLAB_TOKEN", "GITLAB_ACCESS_TOKEN", "CI_JOB_TOKEN",
}

// forgeHome are the forge CLIs' credential stores, dropped from share-home by no-forge.
var forgeHome = []string{".config/gh", ".config/glab-cli"}

// neverPassed says why a name can never enter the sandbox, or "" if it may.
func neverPassed(name string) string {
	for _, v := range launcherVars {
		if v.name == name {
			return "set by the launcher"
		}
	}
	if why, ok := neverNames[name]; ok {
		return why
	}
	for p, why := range neverPrefixes {
		if strings.HasPrefix(name, p) {
			return why
		}
	}
	return ""
}

// PassedByDefault reports whether the launcher passes the variable name from
// the caller's environment without any conf line (TERM, LANG, ANTHROPIC_*,
// CLAUDE_CODE_*, the proxies, …). `claude-sandbox verify` uses it to tell a
// credential that enters by design (ANTHROPIC_API_KEY) from a leak.
func PassedByDefault(name string) bool { return passedByDefault(name) }

func passedByDefault(name string) bool {
	if passedNames[name] {
		return true
	}
	for _, p := range passedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// SessionEnv is what the per-session CLAUDE_SANDBOX_* variables ask for. They
// can only tighten the policy.
type SessionEnv struct {
	Protect []string
	NoForge bool
}

// ParseSessionEnv reads CLAUDE_SANDBOX_* from the launching environment. Any
// variable that would widen the sandbox, or that it does not know, is refused:
// an environment that workspace files can set must not open the sandbox.
func ParseSessionEnv(env launchenv.Env) (SessionEnv, error) {
	var s SessionEnv
	var names []string
	values := map[string]string{}
	for _, v := range env.Vars() {
		name, value := v.Name, v.Value
		if strings.HasPrefix(name, "CLAUDE_SANDBOX_") && value != "" { // empty is unset
			names = append(names, name)
			values[name] = value
		}
	}
	sort.Strings(names)
	for _, name := range names {
		value := values[name]
		switch name {
		case "CLAUDE_SANDBOX_PROTECT":
			for _, p := range strings.Split(value, ":") {
				if p == "" {
					continue
				}
				if err := checkRel(p); err != nil {
					return s, fmt.Errorf("%s: %w", name, err)
				}
				s.Protect = append(s.Protect, p)
			}
		case "CLAUDE_SANDBOX_NO_FORGE":
			if value != "1" {
				return s, fmt.Errorf("%s=%q: only 1 is accepted (a session can tighten, never widen; to change the default, edit no-forge in %s)", name, value, layout.Conf)
			}
			s.NoForge = true
		default:
			key := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "CLAUDE_SANDBOX_"), "_", "-"))
			if k, ok := lookupKey(key); ok && k.Kind != KeyRetired {
				return s, fmt.Errorf("%s would widen the sandbox and is refused; set %q in %s instead", name, key, layout.Conf)
			}
			return s, fmt.Errorf("%s is not a known setting and is refused (known: CLAUDE_SANDBOX_PROTECT, CLAUDE_SANDBOX_NO_FORGE)", name)
		}
	}
	return s, nil
}
