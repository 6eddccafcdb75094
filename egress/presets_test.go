package egress

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
)

// A refusal of a host a preset would let through names the preset, in the
// 403 and in the denial log; other refusals do not, nor does a preset's
// host on a port the preset does not cover, or in a tunnel to port 80,
// which a preset does not open.
func TestRefusalNamesPreset(t *testing.T) {
	p := &Proxy{Policy: Policy{Domains: []hostaddr.Domain{{Host: "example.com"}}}, Resolve: noDNS, Log: &Log{Path: filepath.Join(t.TempDir(), "denials.log")}}
	proxy := startProxy(t, p)
	for target, want := range map[string]string{
		"registry.npmjs.org:443":      "not in the allowlist; allow-preset = npm would let it through",
		"Files.PythonHosted.org.:443": "not in the allowlist; allow-preset = pypi would let it through",
		"deb.debian.org:80":           "not in the allowlist",
		"registry.npmjs.org:8443":     "not in the allowlist",
		"npmjs.org:443":               "not in the allowlist",
	} {
		_, _, resp := connect(t, proxy, target, "")
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(DeniedHeader) != want {
			t.Errorf("CONNECT %s: %s %q, want 403 %q", target, resp.Status, resp.Header.Get(DeniedHeader), want)
		}
	}
	resp, err := proxyClient(proxy).Get("http://deb.debian.org/debian/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "not in the allowlist; allow-preset = debian would let it through"; resp.StatusCode != http.StatusForbidden || resp.Header.Get(DeniedHeader) != want {
		t.Errorf("GET http://deb.debian.org/debian/: %s %q, want 403 %q", resp.Status, resp.Header.Get(DeniedHeader), want)
	}
	ds, _ := Recent(p.Log.Path, 10)
	var npm bool
	for _, d := range ds {
		npm = npm || d.Host == "registry.npmjs.org" && d.Port == 443 && d.Reason == "not in the allowlist; allow-preset = npm would let it through"
	}
	if !npm {
		t.Errorf("the denial log does not name the preset: %+v", ds)
	}
}
