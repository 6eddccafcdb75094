package packaging

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

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
// with the feature's version. The same tree gives the same bytes on any
// machine, which the checksums action.yml pins rely on (release.go): no
// paths (-trimpath), no commit (-buildvcs=false: the pins are committed
// after they are made), go.mod's Go release, and the settings that change
// the code set to their defaults. GOFLAGS is replaced, not emptied: go
// reads an empty one from its env file instead.
func BuildBinary(root, arch, out string) error {
	m, err := features.ReadMetadata(root)
	if err != nil {
		return err
	}
	toolchain, err := goToolchain(root)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X github.com/claude-sandbox/claude-sandbox/cli.Version="+m.Version,
		"-o", out, "./cmd/claude-sandbox")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch,
		"GOTOOLCHAIN="+toolchain, "GOFLAGS=-mod=readonly", "GOAMD64=v1", "GOARM64=v8.0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s for %s: %w\n%s", out, arch, err, b)
	}
	return nil
}

// goToolchain is the Go release go.mod names: its toolchain line, else its
// go line.
func goToolchain(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	var release string
	for _, l := range strings.Split(string(data), "\n") {
		switch f := strings.Fields(l); {
		case len(f) == 2 && f[0] == "toolchain":
			return f[1], nil
		case len(f) == 2 && f[0] == "go":
			release = "go" + f[1]
		}
	}
	if release == "" {
		return "", fmt.Errorf("%s: no go line", filepath.Join(root, "go.mod"))
	}
	return release, nil
}
