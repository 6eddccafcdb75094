package promote

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

func TestIsProductFeature(t *testing.T) {
	for key, want := range map[string]bool{
		FeatureRef:                    true,
		FeatureRef + ":0":             true,
		FeatureRef + ":0.1.0":         true,
		FeatureRef + "@sha256:abc":    true,
		FeatureRef + "-fork:1":        false,
		"ghcr.io/devcontainers/go:1":  false,
		"./local-features/claude-box": false,
	} {
		if got := isProductFeature(key); got != want {
			t.Errorf("isProductFeature(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestFeaturePin(t *testing.T) {
	for _, tc := range []struct {
		file, pin string
		found     bool
	}{
		{`{}`, "", false},
		{`{"features": []}`, "", false},
		{`{"features": {"` + FeatureRef + `": {}}}`, "", true},
		{`{"features": {"a": {}, "` + FeatureRef + `:0.0.9": "latest"}}`, "0.0.9", true},
	} {
		pin, found, err := featurePin([]byte(tc.file))
		if err != nil || pin != tc.pin || found != tc.found {
			t.Errorf("featurePin(%s) = %q, %v, %v; want %q, %v", tc.file, pin, found, err, tc.pin, tc.found)
		}
	}
}

// A feature already at this pin, with no options given, is left byte for
// byte: what makes a second promote change nothing.
func TestPinFeatureIsIdempotent(t *testing.T) {
	file := "{\n\t// c\n\t\"features\": {\"" + FeatureRef + ":1.2.3\": {\"noForge\": true,},}, // x\n}\n"
	got, _, err := pinFeature([]byte(file), "1.2.3", nil)
	if err != nil || string(got) != file {
		t.Errorf("pinFeature changed a current file:\n%s\n(err %v)", got, err)
	}
}

func TestPinFeatureReplacesABareVersionString(t *testing.T) {
	got, snippet, err := pinFeature([]byte(`{"features": {"`+FeatureRef+`": "latest"}}`), "1.2.3", map[string]any{"noForge": true})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"features": {"` + FeatureRef + `:1.2.3": {"noForge": true}}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if wantSnippet := `"` + FeatureRef + `:1.2.3": {"noForge":true}`; snippet != wantSnippet {
		t.Errorf("snippet %s, want %s", snippet, wantSnippet)
	}
}

func TestPinFeatureRefusesFeaturesThatAreNotAnObject(t *testing.T) {
	if _, _, err := pinFeature([]byte(`{"features": []}`), "1", nil); err == nil {
		t.Error("features as an array was accepted")
	}
}

func TestJSONCErrorNamesFileAndLine(t *testing.T) {
	_, err := hujson.Parse([]byte("{\n\n  \"a\": ,\n}"))
	got := jsoncError("x.json", err).Error()
	if !strings.HasPrefix(got, "x.json:3: invalid character") {
		t.Errorf("jsoncError = %q, want x.json:3: invalid character...", got)
	}
	if got := jsoncError("x.json", errors.New("not a JSON object")).Error(); got != "x.json: not a JSON object (promote left it untouched)" {
		t.Errorf("jsoncError without a position = %q", got)
	}
}

func TestLockRoundTrips(t *testing.T) {
	l := lock{Version: "1.2.3", Files: map[string]string{"b": "sha256:2", "a": "sha256:1"}}
	back, err := parseLock(l.bytes())
	if err != nil || string(back.bytes()) != string(l.bytes()) {
		t.Errorf("lock did not round-trip: %v\n%s", err, back.bytes())
	}
	if _, err := parseLock([]byte(`{"version": "1", "extra": 2}`)); err == nil {
		t.Error("a lock with an unknown field was accepted")
	}
}

// A write through the target never leaves its temporary file behind, and
// replaces a hard link instead of writing through it.
func TestWriteReplacesTheEntry(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(outside, filepath.Join(dir, "linked")); err != nil {
		t.Skip("no hard links here:", err)
	}
	tg, err := openTarget(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.close()
	if err := tg.write("linked", []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(outside); string(data) != "outside\n" {
		t.Errorf("the write went through the hard link: outside is %q", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries after one write, want 1", len(entries))
	}
}

// BenchmarkPromote promotes a typical repository: a devcontainer.json with
// comments and an existing .claude/settings.json. The goal is under 100 ms.
func BenchmarkPromote(b *testing.B) {
	const devcontainer = `// The team's dev container.
{
	"name": "app", // shown in VS Code
	"image": "mcr.microsoft.com/devcontainers/go:1",
	"features": {
		"ghcr.io/devcontainers/features/node:1": {"version": "22"},
	},
	"forwardPorts": [8080],
}
`
	const settings = "{\n  \"permissions\": {\"allow\": [\"Bash(make:*)\"]}, // the build\n  \"model\": \"opus\"\n}\n"
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		for name, data := range map[string]string{".devcontainer/devcontainer.json": devcontainer, ".claude/settings.json": settings} {
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := Promote(dir, Options{}, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

// The postCreate.sh line quotes every option value for sh, and only a live
// line (not a comment) counts as the install line a promote must keep.
func TestInstallLine(t *testing.T) {
	line := installLine(map[string]any{"allowWrite": "/srv/it's, /var/cache", "noForge": true})
	want := `sudo sh "$(dirname "$0")/claude-sandbox-install.sh" --user "$(id -un)" --allow-write '/srv/it'\''s' --allow-write '/var/cache' --no-forge # claude-sandbox: installs the sandbox for Claude Code`
	if line != want {
		t.Errorf("installLine:\n got %s\nwant %s", line, want)
	}
	every := installLine(map[string]any{
		"allowWrite": "/w", "allowWriteExecutable": "/x", "sandboxCache": ".npm", "passEnv": "E", "protect": "p/", "noForge": true,
		"network": "open", "allowDomain": "example.com", "allowIp": "10.0.0.0/8", "credentials": "inside",
	})
	want = `sudo sh "$(dirname "$0")/claude-sandbox-install.sh" --user "$(id -un)" --allow-domain 'example.com' --allow-ip '10.0.0.0/8' --allow-write '/w' --allow-write-executable '/x' --credentials 'inside' --network 'open' --pass-env 'E' --protect 'p/' --sandbox-cache '.npm' --no-forge # claude-sandbox: installs the sandbox for Claude Code`
	if every != want {
		t.Errorf("installLine with every option, by option name:\n got %s\nwant %s", every, want)
	}
	if defaults := installLine(map[string]any{"network": "allowlist", "credentials": "proxy", "noForge": false}); defaults != installLine(nil) {
		t.Errorf("installLine with the options at their defaults passes flags: %s", defaults)
	}
	for script, want := range map[string]bool{
		"#!/bin/sh\n" + line + "\n":                   true,
		"#!/bin/sh\n# sh claude-sandbox-install.sh\n": false,
		"#!/bin/sh\nnpm ci\n":                         false,
	} {
		if got := hasInstallLine([]byte(script)); got != want {
			t.Errorf("hasInstallLine(%q) = %v, want %v", script, got, want)
		}
	}
}

// Options are checked against the feature's metadata: a mode outside its
// enum, or an option the feature does not have, is refused.
func TestCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		options map[string]any
		err     string
	}{
		{map[string]any{"network": "open", "credentials": "inside", "allowDomain": "a.example,*.b.example"}, ""},
		{map[string]any{"network": "closed"}, `network: "closed" is not one of the feature's values (allowlist, open)`},
		{map[string]any{"credentials": ""}, `credentials: "" is not one of the feature's values (proxy, inside)`},
		{map[string]any{"egressJail": true}, `the feature has no option "egressJail"`},
	} {
		got := ""
		if err := CheckOptions(tc.options); err != nil {
			got = err.Error()
		}
		if got != tc.err {
			t.Errorf("CheckOptions(%v) = %q, want %q", tc.options, got, tc.err)
		}
	}
}

// An option set to its default in the feature's metadata is removed, a
// mode's default ("allowlist") as much as an empty list.
func TestPinFeatureRemovesDefaults(t *testing.T) {
	file := `{"features": {"` + FeatureRef + `:1": {"protect": ".env", "network": "open", "allowDomain": "a.example"}}}`
	got, _, err := pinFeature([]byte(file), "1", map[string]any{"network": "allowlist", "allowDomain": ""})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"features": {"` + FeatureRef + `:1": {"protect": ".env"}}}`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
