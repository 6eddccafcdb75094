package targets

import (
	"fmt"
	"os"

	"github.com/claude-sandbox/claude-sandbox/features/packaging"
	"github.com/magefile/mage/mg"
)

// Feature holds the devcontainer feature's targets.
type Feature mg.Namespace

// PackageDir is where feature:package writes the package (emptied first).
const PackageDir = "dist/feature"

// Sync copies devcontainer-feature.json into the feature (features/src/claude-sandbox).
func (Feature) Sync() error {
	return packaging.Sync(".")
}

// Package builds the binaries into the feature and packages it into dist/feature (devcontainer features package).
func (Feature) Package() error {
	cli, err := devcontainerCLI()
	if err != nil {
		return err
	}
	return packaging.Package(cli, ".", PackageDir)
}

// Docs rewrites the feature's README.md from its metadata and NOTES.md (devcontainer features generate-docs).
func (Feature) Docs() error {
	cli, err := devcontainerCLI()
	if err != nil {
		return err
	}
	return packaging.GenerateDocs(cli, ".")
}

// Publish builds, packages and pushes the feature to REGISTRY (ghcr.io; localhost:PORT for a local one) as REGISTRY/claude-sandbox/features/claude-sandbox.
func (Feature) Publish(registry string) error {
	cli, err := devcontainerCLI()
	if err != nil {
		return err
	}
	p, err := packaging.Publish(cli, ".", registry)
	if err != nil {
		return err
	}
	fmt.Printf("published %s to %s/%s: tags %v, digest %s\n", p.Version, registry, packaging.Namespace, p.Tags, p.Digest)
	return nil
}

// devcontainerCLI is the pinned devcontainer CLI from the user's cache,
// installed there on first use; its log goes to stderr.
func devcontainerCLI() (packaging.CLI, error) {
	cache, err := packaging.DefaultCLICache()
	if err != nil {
		return packaging.CLI{}, err
	}
	path, err := packaging.DevcontainerCLI(cache)
	if err != nil {
		return packaging.CLI{}, err
	}
	return packaging.CLI{Path: path, Log: os.Stderr}, nil
}
