// Package templates holds the files the installer stamps, embedded in the
// binary and rendered with sprig's hermetic function map (no environment,
// no clock, no randomness: the same options always give the same bytes).
package templates

import (
	"bytes"
	"embed"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

//go:embed *.tmpl
var files embed.FS

// VerifyCommand is the /verify-sandbox slash command, running the
// claude-sandbox binary at launcher. The installer stamps it into the managed
// settings and promote copies it into a repository: one source for both.
func VerifyCommand(launcher string) ([]byte, error) {
	return Render("verify-sandbox.md.tmpl", map[string]string{"Launcher": launcher})
}

// ReleaseURL is where a release's binaries and SHA256SUMS are downloaded
// from, by tag.
const ReleaseURL = "https://github.com/claude-sandbox/claude-sandbox/releases/download/v"

// InstallScript is the script `promote --no-feature` puts in a repository:
// it installs claude-sandbox version from the release's binaries.
func InstallScript(version string) ([]byte, error) {
	return Render("claude-sandbox-install.sh.tmpl", map[string]string{"Version": version, "Release": ReleaseURL + version})
}

// Render executes the named template with data.
func Render(name string, data any) ([]byte, error) {
	t, err := template.New(name).Funcs(sprig.HermeticTxtFuncMap()).ParseFS(files, name)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
