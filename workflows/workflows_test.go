package workflows

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/features/packaging"
	"github.com/rhysd/actionlint"
)

// root is the module root, which holds .github and .devcontainer.
var root = func() string {
	abs, err := filepath.Abs("..")
	if err != nil {
		panic(err)
	}
	return abs
}()

// shellcheck returns the shellcheck that actionlint runs on every `run:`
// script, where most of a workflow's mistakes hide (unquoted expansions,
// a failing command in a pipeline). Without it the scripts go unchecked,
// which under CI=true is a failure and elsewhere a loud line. Pyflakes is
// never run: no step runs Python.
func shellcheck(t *testing.T) string {
	path, err := exec.LookPath("shellcheck")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("workflow scripts must be shellchecked under CI=true, but shellcheck is missing")
	}
	fmt.Fprintf(os.Stderr, "\n!!! LINTING WORKFLOWS WITHOUT SHELLCHECK: it is not installed; their run scripts go unchecked\n\n")
	return ""
}

// linter returns an actionlint linter for this repository that runs the
// shellcheck at shellcheckPath (none if "") and writes its findings to
// out. The project is given, not looked up, so local reusable workflows
// resolve even in a tree without .git.
func linter(t *testing.T, shellcheckPath string, out *bytes.Buffer) (*actionlint.Linter, *actionlint.Project) {
	l, err := actionlint.NewLinter(out, &actionlint.LinterOptions{
		Shellcheck: shellcheckPath,
		Color:      actionlint.ColorOptionKindNever,
		WorkingDir: root,
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	return l, p
}

// workflowFiles returns the paths of every workflow.
func workflowFiles(t *testing.T) []string {
	var files []string
	for _, pattern := range []string{"*.yml", "*.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, ".github", "workflows", pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no workflow in .github/workflows")
	}
	return files
}

// Every workflow passes actionlint with no finding at all.
func TestWorkflowsLint(t *testing.T) {
	files := workflowFiles(t)
	var out bytes.Buffer
	l, p := linter(t, shellcheck(t), &out)
	findings, err := l.LintFiles(files, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) > 0 {
		t.Errorf("actionlint: %d findings in .github/workflows:\n%s", len(findings), out.String())
	}
}

// The linter as configured above reports what it should: a type error in
// an expression, and, through shellcheck, an unquoted expansion in a run
// script. A linter that silently checked nothing would pass every workflow.
func TestLinterReportsFindings(t *testing.T) {
	const bad = `on: push
jobs:
  test:
    runs-on: ubuntu-24.04
    steps:
      - run: echo "${{ github.no_such_property }}"
      - run: rm -rf $TARGET/*
`
	sc := shellcheck(t)
	var out bytes.Buffer
	l, p := linter(t, sc, &out)
	findings, err := l.Lint(filepath.Join(root, ".github", "workflows", "bad.yml"), []byte(bad), p)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, f := range findings {
		kinds[f.Kind] = true
	}
	want := []string{"expression"}
	if sc != "" {
		want = append(want, "shellcheck")
	}
	for _, kind := range want {
		if !kinds[kind] {
			t.Errorf("no %s finding in a workflow that has one; actionlint said:\n%s", kind, out.String())
		}
	}
}

// mageRun is a workflow step's mage invocation; the first group is the
// target.
var mageRun = regexp.MustCompile(`go run github\.com/magefile/mage ([\w:]+)`)

// Every mage target a workflow runs exists: the release cannot run here,
// and a renamed target would only fail on the next tag.
func TestWorkflowsRunExistingMageTargets(t *testing.T) {
	cmd := exec.Command("go", "run", "github.com/magefile/mage", "-l")
	cmd.Dir = root
	list, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mage -l: %v\n%s", err, list)
	}
	targets := map[string]bool{}
	for _, line := range strings.Split(string(list), "\n") {
		if fields := strings.Fields(line); strings.HasPrefix(line, "  ") && len(fields) > 0 {
			targets[strings.TrimSuffix(fields[0], "*")] = true
		}
	}
	for _, file := range workflowFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mageRun.FindAllStringSubmatch(string(data), -1) {
			if !targets[strings.ToLower(m[1])] {
				t.Errorf("%s runs mage target %s, which does not exist; mage -l:\n%s", filepath.Base(file), m[1], list)
			}
		}
	}
}

// The release publishes to the registry users are told to take the feature
// from, which the dev container uses too.
func TestReleasePublishesToTheDocumentedRegistry(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "go run github.com/magefile/mage feature:publish " + packaging.DocsRegistry + "\n"; !strings.Contains(string(data), want) {
		t.Errorf("release.yml has no step %q", strings.TrimSpace(want))
	}
}
