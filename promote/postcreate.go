package promote

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// The third layer, for dev containers that cannot use the feature: an
// install script copied by value into .devcontainer (read-only inside the
// sandbox, like all of .devcontainer), one line in postCreate.sh that runs
// it as root, and postCreateCommand running postCreate.sh.
const (
	PostCreatePath    = ".devcontainer/postCreate.sh"
	InstallScriptPath = ".devcontainer/claude-sandbox-install.sh"
	// postCreateRun is how devcontainer.json runs postCreate.sh, from the
	// workspace folder.
	postCreateRun = "sh .devcontainer/postCreate.sh"
	// installMode is the lock's install field for this layer.
	installMode = "postCreate"
)

// freshPostCreate is the postCreate.sh of a repository that has none.
const freshPostCreate = "#!/bin/sh\n# Run once when the dev container is created (postCreateCommand).\nset -eu\n"

// installLine is the line postCreate.sh gets: the install script, as root,
// for the user the commands run as, with the options given, each as the
// install flag of its conf key, by option name and the bare flags last. An
// option at its default adds no flag, as it adds nothing to devcontainer.json.
func installLine(options map[string]any) string {
	line := `sudo sh "$(dirname "$0")/claude-sandbox-install.sh" --user "$(id -un)"`
	keys := sandbox.ConfKeys()
	slices.SortFunc(keys, func(a, b sandbox.ConfKey) int { return strings.Compare(a.Feature, b.Feature) })
	var flags []sandbox.ConfKey
	for _, k := range keys {
		if k.Feature == "" {
			continue
		}
		if k.Kind == sandbox.KeyFlag {
			flags = append(flags, k)
			continue
		}
		value, _ := options[k.Feature].(string)
		if value == k.Default {
			continue
		}
		for _, item := range strings.Split(value, ",") {
			if item = strings.TrimSpace(item); item != "" {
				line += " --" + k.Name + " " + shellQuote(item)
			}
		}
	}
	for _, k := range flags {
		if set, _ := options[k.Feature].(bool); set {
			line += " --" + k.Name
		}
	}
	return line + " # claude-sandbox: installs the sandbox for Claude Code"
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hasInstallLine reports whether postCreate.sh already runs the install
// script; that line, whatever its options, is the team's and is kept.
func hasInstallLine(script []byte) bool {
	for _, line := range strings.Split(string(script), "\n") {
		if strings.Contains(line, "claude-sandbox-install.sh") && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			return true
		}
	}
	return false
}

// wirePostCreateScript plans postCreate.sh (created, or the install line appended if
// missing) and postCreateCommand in devcontainer.json.
func (p *plan) wirePostCreateScript(t *target, options map[string]any) error {
	old, mode, err := readOptional(t, PostCreatePath)
	if err != nil {
		return err
	}
	if !hasInstallLine(old) {
		next := []byte(freshPostCreate)
		if old != nil {
			next = append([]byte{}, old...)
			if len(next) > 0 && next[len(next)-1] != '\n' {
				next = append(next, '\n')
			}
		}
		next = append(next, installLine(options)+"\n"...)
		if mode == 0 {
			mode = 0o755
		}
		p.drift = append(p.drift, PostCreatePath+": does not run claude-sandbox-install.sh (missing wiring)")
		p.add(PostCreatePath, "the line that installs claude-sandbox", old, next, mode)
	}
	return p.postCreateCommand(t)
}

func (p *plan) postCreateCommand(t *target) error {
	rel, old, mode, err := findDevcontainer(t)
	if err != nil {
		return err
	}
	base := old
	if old == nil {
		base = []byte(minimalPostCreateDevcontainer)
	}
	if _, found, err := featurePin(base); err != nil {
		return jsoncError(rel, err)
	} else if found {
		return fmt.Errorf("%s already uses the claude-sandbox feature; --no-feature is for dev containers that cannot use it (remove the feature first to switch)", rel)
	}
	next, err := wirePostCreate(base)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	if old == nil || string(next) != string(old) {
		p.drift = append(p.drift, rel+": postCreateCommand does not run "+PostCreatePath+" (missing wiring)")
	}
	p.add(rel, "postCreateCommand runs "+PostCreatePath, old, next, mode)
	return nil
}

// minimalPostCreateDevcontainer is what a target without a devcontainer.json
// gets under --no-feature.
const minimalPostCreateDevcontainer = `// Written by claude-sandbox promote --no-feature: Claude Code runs in a
// bubblewrap sandbox in this dev container. Put your project's own image here.
{
    "image": "mcr.microsoft.com/devcontainers/base:ubuntu",
    "postCreateCommand": "` + postCreateRun + `"
}
`

// wirePostCreate makes postCreateCommand run postCreate.sh: added when
// absent, a member added to the object form, and left when it already
// names postCreate.sh. A string or list that runs something else is
// refused: joining it would change what runs, and in which order.
func wirePostCreate(data []byte) ([]byte, error) {
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, err
	}
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	m := member(root, "postCreateCommand")
	if m == nil {
		if err := add(&v, root, []string{"postCreateCommand"}, fmt.Sprintf("%q", postCreateRun)); err != nil {
			return nil, err
		}
		return v.Pack(), nil
	}
	if strings.Contains(string(hujson.Value{Value: m.Value.Value}.Clone().Pack()), "postCreate.sh") {
		return data, nil
	}
	obj, ok := m.Value.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("postCreateCommand already runs something else; make it run %q as well (the object form runs several), then promote again", postCreateRun)
	}
	if err := add(&v, obj, []string{"postCreateCommand", "claude-sandbox"}, fmt.Sprintf("%q", postCreateRun)); err != nil {
		return nil, err
	}
	return v.Pack(), nil
}
