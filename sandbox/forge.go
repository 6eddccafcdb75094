package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
)

// ForgeHost is a host whose TLS the launcher ends for a forge the admin
// named (forge = HOST[:PORT], ADR 0042): the forge's own host, where git
// goes, and its API host where the forge has one of its own.
type ForgeHost struct {
	Name string
	Port int
	// Forge is the host the line names, whose credential this host gets.
	Forge string
	// API says the host is the forge's API, which takes the token as a
	// Bearer credential; git's host takes it as git sends it (Basic).
	API  bool
	Line Line
}

// ForgeCAFile is where the sandbox finds the certificate authorities it
// trusts when forge lines are set: the system's, and the launch's own.
const ForgeCAFile = "/run/claude-sandbox/forge-ca.pem"

// ForgePlaceholder is what a client that insists on a token (gh) gets in
// its place: the launcher drops it from every request and adds the user's.
const ForgePlaceholder = "claude-sandbox-forge-placeholder"

// ForgeHosts are the hosts of the conf's forge lines, each once, in order.
func ForgeHosts(c *Conf) ([]ForgeHost, error) {
	var out []ForgeHost
	seen := map[string]bool{}
	add := func(h ForgeHost) {
		key := fmt.Sprintf("%s:%d", h.Name, h.Port)
		if !seen[key] {
			seen[key] = true
			out = append(out, h)
		}
	}
	for _, l := range c.Forge {
		d, err := parseForge(l.Value)
		if err != nil {
			return nil, &ConfError{File: c.Source, Line: l.Line, Msg: fmt.Sprintf("forge: %q: %v", l.Value, err)}
		}
		port := d.Port
		if port == 0 {
			port = 443
		}
		add(ForgeHost{Name: d.Host, Port: port, Forge: l.Value, Line: l})
		if api, ok := forgeAPIHosts[d.Host]; ok {
			add(ForgeHost{Name: api, Port: port, Forge: l.Value, API: true, Line: l})
		}
	}
	return out, nil
}

// parseForge reads a forge line: a DNS name, no wildcard, and a port.
func parseForge(v string) (hostaddr.Domain, error) {
	d, err := hostaddr.ParseDomain(v)
	if err != nil {
		return d, err
	}
	if strings.HasPrefix(d.Host, "*.") {
		return d, errors.New("names one host, not a wildcard")
	}
	return d, nil
}

// checkForge is the conf's check of a forge line.
func checkForge(v string) error {
	if _, err := parseForge(v); err != nil {
		return fmt.Errorf("%q: %w", v, err)
	}
	return nil
}

// resolveForge checks the forge lines against the network mode and reads
// the system's certificate authorities, which the sandbox's bundle holds
// with the launch's own (Launch.ForgeCA); inside (verify), the bundle the
// launch wrote. It returns nil without forge lines.
func resolveForge(c *Conf, l Launch) ([]byte, error) {
	hosts, err := ForgeHosts(c)
	if err != nil || len(hosts) == 0 {
		return nil, err
	}
	if c.NetworkMode() != NetworkAllowlist {
		return nil, &ConfError{File: c.Source, Line: hosts[0].Line.Line,
			Msg: "forge: needs network = allowlist: the egress proxy, the sandbox's one way out, is where the launcher adds the forge's credential; in open mode git would reach the forge around it"}
	}
	if l.InSandbox {
		// verify, inside: the bundle is the one the launch wrote.
		b, err := os.ReadFile(ForgeCAFile)
		if err != nil {
			return nil, fmt.Errorf("forge: the sandbox's certificate bundle: %w", err)
		}
		return b, nil
	}
	if len(l.ForgeCA) == 0 {
		return nil, errors.New("forge: the launch made no certificate authority for the forge lines")
	}
	for _, f := range systemCABundles {
		if b, err := os.ReadFile(f); err == nil {
			return append(append(b, '\n'), l.ForgeCA...), nil
		}
	}
	return nil, fmt.Errorf("forge: the system has no certificate bundle (looked for %s), and the sandbox's clients would trust the forge's certificate alone", strings.Join(systemCABundles, ", "))
}

// forgeEgress adds the forge hosts to the allowlist, on their ports.
func forgeEgress(p *hostaddr.Allowlist, hosts []ForgeHost) {
	for _, h := range hosts {
		p.Domains = append(p.Domains, hostaddr.Domain{Host: h.Name, Port: h.Port})
	}
}

// forge adds the bundle of certificate authorities the sandbox trusts, on
// the sandbox's own /run, and the variables that name it to the clients;
// for GitHub, the placeholder gh insists on.
func (p *Plan) forge(c *Conf, r *Resolved, env map[string]EnvVar) {
	if r.forgeBundle == nil {
		return
	}
	p.ForgeBundle = r.forgeBundle
	p.Mounts = append(p.Mounts, Mount{Op: OpFile, FD: ForgeCAFD, Dest: ForgeCAFile, Rule: RuleForgeCA,
		Why: "the system's certificate authorities and the launch's own, which vouches only for the forge hosts (forge lines): the launcher ends their TLS and adds the credential outside (ADR 0042)"})
	const why = "the certificate authorities the sandbox trusts: the system's, and the launch's own for the forge hosts (ADR 0042)"
	for _, n := range []string{"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"} {
		env[n] = launcherVar(n, ForgeCAFile, why)
	}
	hosts, _ := ForgeHosts(c)
	for _, h := range hosts {
		if h.Name == "api.github.com" {
			for _, n := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
				env[n] = launcherVar(n, ForgePlaceholder, "gh wants a token; the launcher drops this one and adds the user's outside (ADR 0042)")
			}
		}
	}
}
