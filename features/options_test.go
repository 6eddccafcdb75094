package features

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// installOnly are the feature's options that set no conf key, with the line
// of install.sh that passes each to the install.
var installOnly = map[string]string{
	"claudeVersion": `[ -n "${CLAUDEVERSION:-}" ] && set -- "$@" --claude-version "$CLAUDEVERSION"`,
	"remoteUser":    `user=${REMOTEUSER:-${_REMOTE_USER:-}}`,
}

// installShLine is the line of install.sh that passes a conf key's option
// (the upper-cased variable the devcontainer CLI sets) to its install flag.
func installShLine(k sandbox.ConfKey) string {
	v := strings.ToUpper(k.Feature)
	switch k.Kind {
	case sandbox.KeyRepeatable:
		return fmt.Sprintf(`add_list --%s "${%s:-}"`, k.Name, v)
	case sandbox.KeyFlag:
		return fmt.Sprintf(`[ "${%s:-false}" = true ] && set -- "$@" --%s`, v, k.Name)
	}
	return fmt.Sprintf(`[ -n "${%s:-}" ] && set -- "$@" --%s "$%s"`, v, k.Name, v)
}

// TestOptionsMatchConfKeys keeps devcontainer-feature.json and install.sh in
// step with the conf's schema (sandbox.ConfKeys): each key with a feature
// option has it, with the type, default, modes and description the schema
// gives, and install.sh passes it to the key's install flag; the feature
// has no other option than those and installOnly's, and install.sh reads
// no other.
func TestOptionsMatchConfKeys(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, Source))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Options map[string]struct {
			Type        string   `json:"type"`
			Default     any      `json:"default"`
			Enum        []string `json:"enum"`
			Description string   `json:"description"`
		} `json:"options"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(root, Dir, "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	scriptLines := map[string]bool{}
	for _, l := range strings.Split(string(script), "\n") {
		scriptLines[strings.TrimSpace(l)] = true
	}
	known := map[string]bool{}
	for option, line := range installOnly {
		known[option] = true
		if _, ok := m.Options[option]; !ok {
			t.Errorf("%s has no option %s", Source, option)
		}
		if !scriptLines[line] {
			t.Errorf("%s: install.sh has no line %s", option, line)
		}
	}
	for _, k := range sandbox.ConfKeys() {
		if k.Feature == "" {
			continue
		}
		known[k.Feature] = true
		o, ok := m.Options[k.Feature]
		if !ok {
			t.Errorf("conf key %s: %s has no option %s", k.Name, Source, k.Feature)
			continue
		}
		typ, def := "string", any(k.Default)
		if k.Kind == sandbox.KeyFlag {
			typ, def = "boolean", false
		}
		if o.Type != typ || o.Default != def {
			t.Errorf("conf key %s: option %s is a %s defaulting to %#v; the schema says a %s defaulting to %#v", k.Name, k.Feature, o.Type, o.Default, typ, def)
		}
		if !sameSet(o.Enum, k.Values) {
			t.Errorf("conf key %s: option %s takes %v; the schema says %v", k.Name, k.Feature, o.Enum, k.Values)
		}
		if o.Description != k.FeatureHelp {
			t.Errorf("conf key %s: option %s's description differs from the schema's:\n  %s: %s\n  schema: %s", k.Name, k.Feature, Source, o.Description, k.FeatureHelp)
		}
		if line := installShLine(k); !scriptLines[line] {
			t.Errorf("conf key %s: install.sh has no line %s", k.Name, line)
		}
	}
	// HOME is the build's own (npm's cache is in it), not an option.
	variables := map[string]bool{"HOME": true}
	for option := range m.Options {
		variables[strings.ToUpper(option)] = true
		if !known[option] {
			t.Errorf("%s: option %s sets no conf key and is not one of the install's own options", Source, option)
		}
	}
	for _, read := range regexp.MustCompile(`\$\{([A-Z][A-Z0-9]*):-`).FindAllStringSubmatch(string(script), -1) {
		if !variables[read[1]] {
			t.Errorf("install.sh reads ${%s}, which is no option of the feature", read[1])
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestReadmeNamesEveryOption keeps the README's list of the feature's
// options whole: each option is named there.
func TestReadmeNamesEveryOption(t *testing.T) {
	var m struct {
		Options map[string]json.RawMessage `json:"options"`
	}
	data, err := os.ReadFile(filepath.Join(root, Source))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, list, _ := strings.Cut(string(readme), "The feature runs the same installer at image build (options:")
	list, _, _ = strings.Cut(list, ";")
	for name := range m.Options {
		if !strings.Contains(list, "`"+name+"`") {
			t.Errorf("README.md's list of the feature's options lacks `%s`", name)
		}
	}
}
