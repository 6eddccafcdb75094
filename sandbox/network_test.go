package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
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
		p, err := EgressPolicy(c, tc.environ, tc.authProxied)
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
	if _, err := EgressPolicy(c, []string{"ANTHROPIC_BASE_URL=::"}, false); err == nil {
		t.Error("a base URL that is not a URL was accepted")
	}
}

// A preset stands for its hosts as lines without a port, after the admin's
// own allow-domain lines.
func TestEgressPolicyPresets(t *testing.T) {
	c, err := ParseConf("test.conf", strings.NewReader("allow-preset = pypi, go\nallow-domain = example.com:8443\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := EgressPolicy(c, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []hostaddr.Domain{{Host: "example.com", Port: 8443}, {Host: "pypi.org"}, {Host: "files.pythonhosted.org"}, {Host: "proxy.golang.org"}, {Host: "sum.golang.org"}}
	if !slices.Equal(p.Domains, want) {
		t.Errorf("domains %v, want %v", p.Domains, want)
	}
}
