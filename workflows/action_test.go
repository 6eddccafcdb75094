package workflows

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/claude-sandbox/claude-sandbox/features"
	"github.com/claude-sandbox/claude-sandbox/features/packaging"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/templates"
)

// action is what the tests read of action.yml.
type action struct {
	Inputs map[string]struct {
		Description string  `yaml:"description"`
		Default     *string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string       `yaml:"using"`
		Steps []actionStep `yaml:"steps"`
	} `yaml:"runs"`
}

type actionStep struct {
	ID  string            `yaml:"id"`
	Env map[string]string `yaml:"env"`
	Run string            `yaml:"run"`
}

// installStep is the composite action's step of id install, the one that
// installs the product.
func installStep(t *testing.T, a action) actionStep {
	i := slices.IndexFunc(a.Runs.Steps, func(s actionStep) bool { return s.ID == "install" })
	if a.Runs.Using != "composite" || i < 0 {
		t.Fatal("action.yml is not a composite action with a step of id install")
	}
	return a.Runs.Steps[i]
}

func readAction(t *testing.T) action {
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

// actionOnly are the action's inputs that set no conf key, with the line
// of action/install.sh that passes each to the install.
var actionOnly = map[string]string{
	"claude-version": `[ -n "${INPUT_CLAUDE_VERSION:-}" ] && set -- "$@" --claude-version "$INPUT_CLAUDE_VERSION"`,
}

// inputVar is the variable the install step gives an input's value in.
func inputVar(name string) string {
	return "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// TestActionInputsMatchConfKeys keeps action.yml and action/install.sh in
// step with the conf's schema: every key the devcontainer feature sets is
// an input of the key's name, with the feature option's description and
// the key's default, which the install step passes in its variable and
// install.sh to the key's install flag; there are no other inputs.
func TestActionInputsMatchConfKeys(t *testing.T) {
	a := readAction(t)
	script, err := os.ReadFile(filepath.Join(root, "action", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(script), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	install := installStep(t, a)
	want := map[string]string{}
	for name, line := range actionOnly {
		want[name] = line
	}
	for _, k := range sandbox.ConfKeys() {
		if k.Feature == "" {
			continue
		}
		v := inputVar(k.Name)
		var line, def string
		switch k.Kind {
		case sandbox.KeyRepeatable:
			line = fmt.Sprintf(`add_list --%s "${%s:-}"`, k.Name, v)
		case sandbox.KeyFlag:
			line, def = fmt.Sprintf(`[ "${%s:-false}" = true ] && set -- "$@" --%s`, v, k.Name), "false"
		default:
			line, def = fmt.Sprintf(`[ -n "${%s:-}" ] && set -- "$@" --%s "$%s"`, v, k.Name, v), k.Default
		}
		want[k.Name] = line
		in, ok := a.Inputs[k.Name]
		switch {
		case !ok:
			t.Errorf("action.yml has no input %s (conf %s)", k.Name, k.Name)
			continue
		case in.Description != k.FeatureHelp:
			t.Errorf("action.yml: %s: the description is not the feature option %s's: %q", k.Name, k.Feature, k.FeatureHelp)
		case in.Default == nil || *in.Default != def:
			t.Errorf("action.yml: %s: the default is not %q", k.Name, def)
		}
	}
	for name, line := range want {
		if _, ok := a.Inputs[name]; !ok {
			t.Errorf("action.yml has no input %s", name)
		}
		if got := install.Env[inputVar(name)]; got != "${{ inputs."+name+" }}" {
			t.Errorf("action.yml: the install step sets %s to %q, not the input %s", inputVar(name), got, name)
		}
		if !lines[line] {
			t.Errorf("%s: action/install.sh has no line %s", name, line)
		}
	}
	for name := range a.Inputs {
		if _, ok := want[name]; !ok {
			t.Errorf("action.yml has an input %s that sets nothing", name)
		}
	}
	if got := a.Outputs["launcher"].Value; got != "${{ steps.install.outputs.launcher }}" {
		t.Errorf("action.yml: the output launcher is %q, not the install step's", got)
	}
}

// The action installs the release of its own version: the one the release
// workflow makes from the tag that equals devcontainer-feature.json's
// version. docs/action.md's workflow names that tag.
func TestActionIsPinnedToItsVersion(t *testing.T) {
	m, err := features.ReadMetadata(root)
	if err != nil {
		t.Fatal(err)
	}
	a := readAction(t)
	for _, s := range a.Runs.Steps {
		if s.ID == "install" && s.Env["RELEASE"] != templates.ReleaseURL+m.Version {
			t.Errorf("action.yml: the install step's RELEASE is %q, want %s%s", s.Env["RELEASE"], templates.ReleaseURL, m.Version)
		}
	}
	if doc := documentedWorkflow(t); !strings.Contains(doc, "uses: claude-sandbox/claude-sandbox@v"+m.Version+"\n") {
		t.Errorf("docs/action.md's workflow does not use claude-sandbox/claude-sandbox@v%s", m.Version)
	}
}

// The install step pins one checksum for each released binary, the value
// packaging reads and the release checks its binaries against; install.sh
// checks the binary against it and downloads over https only.
func TestActionPinsTheReleaseChecksums(t *testing.T) {
	a := readAction(t)
	sums := installStep(t, a).Env["SHA256SUMS"]
	pinned, err := packaging.PinnedSums(root)
	if err != nil || pinned != sums {
		t.Errorf("packaging reads the pins as %q (%v), YAML as %q", pinned, err, sums)
	}
	var want []string
	for _, arch := range []string{"amd64", "arm64"} {
		want = append(want, `[0-9a-f]{64}  `+regexp.QuoteMeta(path.Base(packaging.BinaryName(arch))))
	}
	if !regexp.MustCompile(`^`+strings.Join(want, `\n`)+`\n$`).MatchString(sums) || strings.Contains(sums, strings.Repeat("0", 64)) {
		t.Errorf("action.yml: the install step's SHA256SUMS is %q, not a checksum for each released binary", sums)
	}
	script, err := os.ReadFile(filepath.Join(root, "action", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`sum=$(printf '%s\n' "${SHA256SUMS:-}" | grep -x "[0-9a-f]\{64\}  $bin" || true)`,
		`if ! curl -fsSL --proto '=https' --proto-redir '=https' "$release/$bin" -o "$dir/$bin"; then`,
		`(cd "$dir" && printf '%s\n' "$sum" | sha256sum -c - >/dev/null) || {`,
	} {
		if !strings.Contains(string(script), "\n"+line+"\n") {
			t.Errorf("action/install.sh has no line %s", line)
		}
	}
}

// The release checks its binaries against the pins before it publishes
// anything, and again before it uploads them, and uploads the SHA256SUMS
// the check wrote.
func TestReleaseChecksThePins(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	const check = "go run github.com/magefile/mage release:check"
	find := func(text string) int {
		return slices.IndexFunc(wf.Jobs["publish"].Steps, func(s struct {
			Run string `yaml:"run"`
		}) bool {
			return strings.Contains(s.Run, text)
		})
	}
	checked, published, uploaded := find(check), find("mage feature:publish"), find("gh release create")
	if checked < 0 || published < 0 || checked > published {
		t.Errorf("release.yml: the publish job does not run %q before it publishes the feature", check)
	}
	if uploaded < 0 {
		t.Fatal("release.yml: the publish job uploads no release")
	}
	up := wf.Jobs["publish"].Steps[uploaded].Run
	if c, u := strings.Index(up, check), strings.Index(up, "gh release create"); c < 0 || c > u || !strings.Contains(up, "cd "+path.Dir(path.Join(features.Dir, packaging.SumsFile))+"\n") || !strings.Contains(up, " "+path.Base(packaging.SumsFile)+"\n") {
		t.Errorf("release.yml: the upload does not run %q first and upload %s:\n%s", check, packaging.SumsFile, up)
	}
}

// documentedWorkflow is the first yaml block of docs/action.md.
func documentedWorkflow(t *testing.T) string {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "action.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/action.md has no yaml block")
	}
	return string(m[1])
}

// The workflow docs/action.md documents passes actionlint, with the action
// taken from this tree: its inputs and output are checked against
// action.yml. action/install.sh passes shellcheck.
func TestActionLint(t *testing.T) {
	m, err := features.ReadMetadata(root)
	if err != nil {
		t.Fatal(err)
	}
	wf := strings.ReplaceAll(documentedWorkflow(t), "uses: claude-sandbox/claude-sandbox@v"+m.Version, "uses: ./")
	if !strings.Contains(wf, "uses: ./\n") {
		t.Fatal("docs/action.md's workflow does not use the action")
	}
	sc := shellcheck(t)
	var out bytes.Buffer
	l, p := linter(t, sc, &out)
	findings, err := l.Lint(filepath.Join(root, ".github", "workflows", "claude.yml"), []byte(wf), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) > 0 {
		t.Errorf("actionlint: %d findings in docs/action.md's workflow:\n%s", len(findings), out.String())
	}
	// An input the action does not have is a finding: the check is on.
	bad := strings.Replace(wf, "allow-preset:", "allow-presets:", 1)
	out.Reset()
	if findings, _ := l.Lint(filepath.Join(root, ".github", "workflows", "claude.yml"), []byte(bad), p); len(findings) == 0 {
		t.Errorf("actionlint found nothing wrong with an input action.yml does not have")
	}
	if sc == "" {
		return
	}
	cmd := exec.Command(sc, "--shell=sh", filepath.Join(root, "action", "install.sh"))
	if outb, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("shellcheck action/install.sh: %v\n%s", err, outb)
	}
}
