package hostaddr

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// presetTable is the table of presets docs/network.md shows, one row per
// host, the preset and its client named on its first row.
func presetTable() string {
	var b strings.Builder
	b.WriteString("| preset | client | host | what the client reads there |\n| --- | --- | --- | --- |\n")
	for _, p := range Presets {
		for i, h := range p.Hosts {
			name, client := "", ""
			if i == 0 {
				name, client = "`"+p.Name+"`", p.Client
			}
			fmt.Fprintf(&b, "| %s | %s | `%s` | %s |\n", name, client, h.Host, h.Why)
		}
	}
	return b.String()
}

// TestPresetDocs keeps docs/network.md's table of presets the presets'
// hosts, exactly.
func TestPresetDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/network.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n### `allow-preset = NAME`\n")
	if !ok {
		t.Fatal("docs/network.md has no section ### `allow-preset = NAME`")
	}
	i := strings.Index(section, "\n| preset |")
	if i < 0 {
		t.Fatal("docs/network.md: the allow-preset section has no table")
	}
	got, _, _ := strings.Cut(section[i+1:], "\n\n")
	if want := presetTable(); got+"\n" != want {
		t.Errorf("docs/network.md's table of presets is not the presets'; write:\n%s", want)
	}
}

func TestPresets(t *testing.T) {
	seen := map[string]string{}
	for _, p := range Presets {
		if p.Client == "" || len(p.Hosts) == 0 {
			t.Errorf("%s: a preset names its client and at least one host", p.Name)
		}
		for _, h := range p.Hosts {
			if d, err := ParseDomain(h.Host); err != nil || d.Host != h.Host || strings.HasPrefix(h.Host, "*") {
				t.Errorf("%s: %q is not one plain host name", p.Name, h.Host)
			}
			if other, ok := seen[h.Host]; ok {
				t.Errorf("%s is in both %s and %s", h.Host, other, p.Name)
			}
			seen[h.Host] = p.Name
		}
	}
	ps, err := ParsePresets("npm, pypi,go")
	if err != nil || len(ps) != 3 || ps[2].Name != "go" {
		t.Errorf(`ParsePresets("npm, pypi,go") = %v, %v`, ps, err)
	}
	for _, bad := range []string{"nmp", "npm,", "NPM"} {
		if _, err := ParsePresets(bad); err == nil || !strings.Contains(err.Error(), "is not a preset (npm, pypi, go, crates, rubygems, maven, debian, ubuntu, alpine, github, gitlab, docker-hub)") {
			t.Errorf("ParsePresets(%q): %v, want a refusal naming the presets", bad, err)
		}
	}
}
