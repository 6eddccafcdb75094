package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
)

// TestEgressPolicyClaudeHosts: Claude's own hosts are open to the sandbox
// only when its login is inside; with the credential proxy the API is
// reached through the launcher and no Anthropic host is listed.
func TestEgressPolicyClaudeHosts(t *testing.T) {
	c, err := ParseConf("test.conf", strings.NewReader("allow-domain = registry.npmjs.org\nallow-ip = 10.0.0.0/8\n"))
	if err != nil {
		t.Fatal(err)
	}
	hosts := func(p *hostaddr.Allowlist) []string {
		var out []string
		for _, d := range p.Domains {
			out = append(out, d.Host)
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		environ     []string
		authProxied bool
		want        []string
	}{
		{"proxied", []string{"ANTHROPIC_BASE_URL=https://gateway.example"}, true, []string{"registry.npmjs.org"}},
		{"inside", nil, false, append([]string{"registry.npmjs.org"}, claudeHosts...)},
		{"inside with a gateway", []string{"ANTHROPIC_BASE_URL=http://gateway.example:8080/v1"}, false, append(append([]string{"registry.npmjs.org"}, claudeHosts...), "gateway.example")},
	} {
		p, err := EgressPolicy(c, launchenv.Read(tc.environ), tc.authProxied)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := hosts(p); !slices.Equal(got, tc.want) {
			t.Errorf("%s: hosts %v, want %v", tc.name, got, tc.want)
		}
		if len(p.IPs) != 1 || p.IPs[0].String() != "10.0.0.0/8" {
			t.Errorf("%s: allow-ip %v", tc.name, p.IPs)
		}
	}
	// The base URL is read by the door's one parser: what the credential
	// proxy would refuse as no http(s) URL is refused here too, never let
	// through as a host of the allowlist nor dropped unsaid (red with the
	// scheme check removed: ftp:// was dropped, the launch went on).
	for _, base := range []string{"::", "ftp://gateway.example", "gateway.example:8443", "https://"} {
		_, err := EgressPolicy(c, launchenv.Read([]string{"ANTHROPIC_BASE_URL=" + base}), false)
		if want := `ANTHROPIC_BASE_URL="` + base + `" is not an http(s) URL`; err == nil || err.Error() != want {
			t.Errorf("base URL %q: %v, want %s", base, err, want)
		}
	}
}

// TestEgressPolicyBaseURLPort: the base URL's host is let through on the
// port its requests go to, the scheme's when the URL names none (red with
// the scheme's port left out: https://gateway.example named no port, which
// also let plain http through to port 80).
func TestEgressPolicyBaseURLPort(t *testing.T) {
	c, err := ParseConf("test.conf", strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	for base, want := range map[string]hostaddr.Domain{
		"https://gateway.example":          {Host: "gateway.example", Port: 443},
		"https://gateway.example/v1":       {Host: "gateway.example", Port: 443},
		"http://gateway.example":           {Host: "gateway.example", Port: 80},
		"https://gateway.example:8443/api": {Host: "gateway.example", Port: 8443},
	} {
		p, err := EgressPolicy(c, launchenv.Read([]string{"ANTHROPIC_BASE_URL=" + base}), false)
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if got := p.Domains[len(p.Domains)-1]; got != want {
			t.Errorf("%s: %+v, want %+v", base, got, want)
		}
	}
}

// A preset stands for its hosts as lines without a port, after the admin's
// own allow-domain lines.
func TestEgressPolicyPresets(t *testing.T) {
	c, err := ParseConf("test.conf", strings.NewReader("allow-preset = pypi, go\nallow-domain = example.com:8443\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := EgressPolicy(c, launchenv.Env{}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []hostaddr.Domain{{Host: "example.com", Port: 8443}, {Host: "pypi.org"}, {Host: "files.pythonhosted.org"}, {Host: "proxy.golang.org"}, {Host: "sum.golang.org"}}
	if !slices.Equal(p.Domains, want) {
		t.Errorf("domains %v, want %v", p.Domains, want)
	}
}
