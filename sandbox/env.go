package sandbox

import (
	"fmt"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

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
