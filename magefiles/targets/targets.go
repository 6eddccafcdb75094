// Package targets holds the mage targets. Each is a thin wrapper: Install
// builds claude-sandbox and runs its install command, the same code the
// repository's ./install and the devcontainer feature run; Promote runs
// the code of `claude-sandbox promote`.
package targets

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/claude-sandbox/claude-sandbox/features/packaging"
	"github.com/claude-sandbox/claude-sandbox/promote"
)

// Build builds the static claude-sandbox for amd64 and arm64 into the feature (features/src/claude-sandbox/bin).
func Build() error {
	return packaging.BuildBinaries(".")
}

// Install builds claude-sandbox and runs `claude-sandbox install` (as root).
func Install() error {
	return install()
}

// Promote gives the repository at target sandboxed Claude, pinned to this version (claude-sandbox promote TARGET).
func Promote(target string) error {
	return promote.Promote(target, promote.Options{}, os.Stdout)
}

// Test runs the test suite, as CI does.
func Test() error {
	return run("go", "test", "./...")
}

func build(out string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/claude-sandbox")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	return nil
}

// install builds into a temporary directory and runs install with args.
func install(args ...string) error {
	dir, err := os.MkdirTemp("", "claude-sandbox-build")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "claude-sandbox")
	if err := build(bin); err != nil {
		return err
	}
	return run(bin, append([]string{"install"}, args...)...)
}

func run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}
