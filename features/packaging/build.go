package packaging

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/claude-sandbox/claude-sandbox/features"
)

// arches are the architectures the feature ships binaries for.
var arches = []string{"amd64", "arm64"}

// Sync writes the feature's copy of the metadata from the source. The copy
// is byte for byte the source, so a test can tell when one was edited
// without the other.
func Sync(root string) error {
	data, err := os.ReadFile(filepath.Join(root, features.Source))
	if err != nil {
		return err
	}
	dst := filepath.Join(root, features.Copy)
	if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return os.WriteFile(dst, data, 0o644)
}

// BinaryName is the shipped binary for arch, relative to features.Dir.
func BinaryName(arch string) string { return "bin/claude-sandbox-linux-" + arch }

// BuildBinaries builds the static claude-sandbox for every architecture
// into the feature, stamped with the feature's version, so an image build
// needs no network for our own code.
func BuildBinaries(root string) error {
	for _, arch := range arches {
		if err := BuildBinary(root, arch, filepath.Join(root, features.Dir, BinaryName(arch))); err != nil {
			return err
		}
	}
	return nil
}

// BuildBinary builds the static claude-sandbox for arch into out, stamped
// with the feature's version.
func BuildBinary(root, arch, out string) error {
	m, err := features.ReadMetadata(root)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-trimpath",
		"-ldflags", "-s -w -X github.com/claude-sandbox/claude-sandbox/cli.Version="+m.Version,
		"-o", out, "./cmd/claude-sandbox")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s for %s: %w\n%s", out, arch, err, b)
	}
	return nil
}
