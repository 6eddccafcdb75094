package workflows

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tailscale/hujson"

	"github.com/claude-sandbox/claude-sandbox/features"
	"github.com/claude-sandbox/claude-sandbox/features/packaging"
)

// devcontainerConfig is .devcontainer/devcontainer.json.
var devcontainerConfig = filepath.Join(root, ".devcontainer", "devcontainer.json")

// featureNamespace is where users get the feature and the release
// workflow publishes it: REGISTRY/NAMESPACE, before /ID:TAG.
const featureNamespace = packaging.DocsRegistry + "/" + packaging.Namespace

// readDevcontainer returns devcontainer.json as standard JSON.
func readDevcontainer(t *testing.T) []byte {
	data, err := os.ReadFile(devcontainerConfig)
	if err != nil {
		t.Fatal(err)
	}
	std, err := hujson.Standardize(data)
	if err != nil {
		t.Fatalf("%s: %v", devcontainerConfig, err)
	}
	return std
}

// The dev container validates against the spec's devcontainer.json schema.
func TestDevcontainerValidates(t *testing.T) {
	schema, err := jsonschema.NewCompiler().Compile(filepath.Join(root, "features", "testdata", "devContainer.base.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(readDevcontainer(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(v); err != nil {
		t.Errorf("%s does not validate against the devcontainer schema:\n%v", devcontainerConfig, err)
	}
}

// publishedFeature returns the reference among refs to the feature as the
// release workflow publishes it, or "" when there is none.
func publishedFeature(t *testing.T, refs map[string]json.RawMessage) string {
	m, err := features.ReadMetadata(root)
	if err != nil {
		t.Fatal(err)
	}
	for ref := range refs {
		if strings.HasPrefix(ref, featureNamespace+"/"+m.ID+":") {
			return ref
		}
	}
	return ""
}

// The dev container takes claude-sandbox from the published feature, and
// grants the container nothing itself: what bwrap needs must come from the
// feature's own metadata, as it does in a user's container.
func TestDevcontainerUsesThePublishedFeature(t *testing.T) {
	var config map[string]json.RawMessage
	if err := json.Unmarshal(readDevcontainer(t), &config); err != nil {
		t.Fatal(err)
	}
	var refs map[string]json.RawMessage
	if err := json.Unmarshal(config["features"], &refs); err != nil {
		t.Fatalf("features: %v", err)
	}
	if publishedFeature(t, refs) == "" {
		t.Errorf("%s does not use the published claude-sandbox feature from %s", devcontainerConfig, featureNamespace)
	}
	for _, key := range []string{"securityOpt", "runArgs", "capAdd", "privileged"} {
		if _, ok := config[key]; ok {
			t.Errorf("%s sets %s; the feature must declare what it needs", devcontainerConfig, key)
		}
	}
}

// devcontainerCLI returns the pinned CLI's devcontainer binary, installed
// on first use. Without it (no npm, no registry) the test is skipped with
// a loud line; under CI=true it fails.
func devcontainerCLI(t *testing.T) string {
	path, err := packaging.DevcontainerCLI(packaging.TestCLICache)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the devcontainer read-configuration test must run under CI=true, but: %v", err)
		}
		fmt.Fprintf(os.Stderr, "\n!!! SKIPPING devcontainer read-configuration: %v\n\n", err)
		t.Skip(err)
	}
	return path
}

// dockerWithoutContainers stands in for the Docker CLI: read-configuration
// asks `docker ps` for a running dev container of the workspace, and needs
// nothing else, so no Docker engine is required. Any other command fails,
// so the test says so if the CLI starts to want more.
const dockerWithoutContainers = `#!/bin/sh
[ "$1" = ps ] && exit 0
echo "docker stand-in: only ps is answered, not: $*" >&2
exit 1
`

// The devcontainer CLI reads the dev container as VS Code and Codespaces
// would, with the published feature in it.
func TestDevcontainerReadConfiguration(t *testing.T) {
	cli := devcontainerCLI(t)
	docker := filepath.Join(t.TempDir(), "docker")
	if err := os.WriteFile(docker, []byte(dockerWithoutContainers), 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(cli, "read-configuration", "--workspace-folder", root, "--docker-path", docker)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("devcontainer read-configuration: %v\n%s", err, stderr.String())
	}
	var got struct {
		Configuration struct {
			Features       map[string]json.RawMessage `json:"features"`
			ConfigFilePath struct {
				FsPath string `json:"fsPath"`
			} `json:"configFilePath"`
		} `json:"configuration"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("read-configuration printed no configuration: %v\n%s", err, stdout.String())
	}
	if got.Configuration.ConfigFilePath.FsPath != devcontainerConfig {
		t.Errorf("read-configuration read %q, want %s", got.Configuration.ConfigFilePath.FsPath, devcontainerConfig)
	}
	if publishedFeature(t, got.Configuration.Features) == "" {
		t.Errorf("read-configuration found no published claude-sandbox feature in %s", stdout.String())
	}
}
