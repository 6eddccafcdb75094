package packaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// CLIPackage is the devcontainer CLI's npm package, and CLIVersion the
// version every target runs: packaging, README generation and publishing
// follow the CLI's behaviour, so a pinned version keeps them reproducible.
const (
	CLIPackage = "@devcontainers/cli"
	CLIVersion = "0.89.0"
)

// TestCLICache is where the repository's tests keep the pinned CLI, shared
// by every package that needs it and kept between runs.
const TestCLICache = "/tmp/claude-sandbox-test-devcontainer-cli"

// DefaultCLICache is where the targets keep installed CLI versions:
// $XDG_CACHE_HOME/claude-sandbox/devcontainer-cli, else ~/.cache/....
func DefaultCLICache() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "claude-sandbox", "devcontainer-cli"), nil
}

// DevcontainerCLI returns the pinned CLI's devcontainer binary under
// cache/CLIVersion, installing it with npm first if it is not there.
func DevcontainerCLI(cache string) (string, error) {
	dir := filepath.Join(cache, CLIVersion)
	if _, err := os.Stat(cliBinary(dir)); err == nil {
		return cliBinary(dir), nil
	}
	if err := installCLI(dir); err != nil {
		return "", err
	}
	return cliBinary(dir), nil
}

// cliBinary is the devcontainer binary in an npm prefix; npm links it
// relatively, so a prefix still works after it is renamed.
func cliBinary(prefix string) string {
	return filepath.Join(prefix, "node_modules", ".bin", "devcontainer")
}

// installCLI installs the CLI into a temporary prefix next to dir and
// renames it into place, so an interrupted install never looks complete
// and of two concurrent installs the second simply keeps the first's.
func installCLI(dir string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("installing %s: npm is not installed", CLIPackage)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".install-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", tmp, CLIPackage+"@"+CLIVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install %s@%s: %w: %s", CLIPackage, CLIVersion, err, lastLine(out))
	}
	if _, err := os.Stat(cliBinary(tmp)); err != nil {
		return fmt.Errorf("npm install %s@%s: no devcontainer binary: %w", CLIPackage, CLIVersion, err)
	}
	// MkdirTemp's 0700 would keep other users from a shared cache.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(cliBinary(dir)); statErr == nil {
			return nil
		}
		return err
	}
	return nil
}

// CLI runs one installed devcontainer CLI.
type CLI struct {
	Path string    // the devcontainer binary
	Log  io.Writer // where the CLI's log (its stderr) goes besides errors; nil drops it
}

// run runs the CLI in dir and returns its standard output. The CLI logs to
// stderr; a failure's error carries the line of the log that says why.
//
// Each run has a temporary directory of its own: the CLI stages a feature
// it packages in one named by the millisecond (templates-src-output-MS)
// and removes it afterwards, so two runs that share one, started in the
// same millisecond, would package each other's files or lose them.
func (c CLI) run(dir string, args ...string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "devcontainer-cli-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(c.Path, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if c.Log != nil {
		cmd.Stderr = io.MultiWriter(&stderr, c.Log)
	}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("devcontainer %s: %w: %s", strings.Join(args, " "), err, failureLine(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

// Package packages the feature collection src (a folder with one folder
// per feature) into out, emptied first: a .tgz per feature (an
// uncompressed tar, despite the name) and devcontainer-collection.json.
func (c CLI) Package(src, out string) error {
	_, err := c.run("", "features", "package", src, "--output-folder", out, "--force-clean-output-folder")
	return err
}

// GenerateDocs writes README.md into every feature of the collection src,
// a path relative to dir, replacing the whole file: the CLI's template
// filled from the metadata, with the feature's NOTES.md in the middle, and
// nothing that varies between runs. The example usage names
// registry/namespace. The CLI's help calls --project-folder the folder
// holding src, but the CLI documents each folder of --project-folder, so
// it is given the collection itself.
func (c CLI) GenerateDocs(dir, src, registry, namespace string) error {
	_, err := c.run(dir, "features", "generate-docs", "--project-folder", src, "--registry", registry, "--namespace", namespace)
	return err
}

// Published is what publishing did to one feature.
type Published struct {
	Version string   `json:"version"`
	Tags    []string `json:"publishedTags"`
	Digest  string   `json:"digest"`
}

// Publish packages the collection src and pushes each feature to
// registry/namespace/ID, tagged with its version and the version's
// prefixes (0, 0.1, 0.1.0, latest). It returns the CLI's report by feature
// id; a feature whose version the registry already has is skipped, and
// reported with no version.
//
// The CLI speaks plain HTTP to a registry whose host is exactly localhost,
// and https to every other, loopback addresses included.
func (c CLI) Publish(src, registry, namespace string) (map[string]Published, error) {
	if err := checkRegistry(registry); err != nil {
		return nil, err
	}
	out, err := c.run("", "features", "publish", src, "--registry", registry, "--namespace", namespace)
	if err != nil {
		return nil, err
	}
	var report map[string]Published
	if err := json.Unmarshal(out, &report); err != nil {
		return nil, fmt.Errorf("devcontainer features publish: reading its report: %w", err)
	}
	return report, nil
}

// checkRegistry refuses a loopback address, which the CLI would address
// over https: against a local plain-HTTP registry that fails with an
// OpenSSL "wrong version number", which does not say what to do.
func checkRegistry(registry string) error {
	host := registry
	if h, _, err := net.SplitHostPort(registry); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return fmt.Errorf("registry %s: name a registry on this machine localhost:PORT, the only host the devcontainer CLI reaches over plain HTTP", registry)
	}
	return nil
}

// failureLine is the line of the CLI's log that says why it failed: its
// last error (a thrown one's first line, "Error: ..." above the stack, or
// one the CLI writes, "(!) ERR: ..."), else the log's last line.
func failureLine(log []byte) string {
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if thrownError.MatchString(lines[i]) || strings.Contains(lines[i], "(!) ERR") {
			return strings.TrimSpace(lines[i])
		}
	}
	return lines[len(lines)-1]
}

// thrownError is the first line Node prints of an uncaught error.
var thrownError = regexp.MustCompile(`^\s*(\w*Error|\[\w*Error)\b`)

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
