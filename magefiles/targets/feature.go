package targets

import (
	"fmt"
	"os"

	"github.com/claude-sandbox/claude-sandbox/features"
	"github.com/magefile/mage/mg"
)

// Feature holds the devcontainer feature's targets.
type Feature mg.Namespace

// PackageDir is where feature:package writes the package (emptied first).
const PackageDir = "dist/feature"

// Sync copies devcontainer-feature.json into the feature (features/src/claude-sandbox).
func (Feature) Sync() error {
	return features.Sync(".")
}

// Package builds the binaries into the feature and packages it into dist/feature (devcontainer features package).
func (Feature) Package() error {
	cli, err := devcontainerCLI()
	if err != nil {
		return err
	}
	return features.Package(cli, ".", PackageDir)
}

// Docs rewrites the feature's README.md from its metadata and NOTES.md (devcontainer features generate-docs).
func (Feature) Docs() error {
	cli, err := devcontainerCLI()
	if err != nil {
		return err
	}
	return features.GenerateDocs(cli, ".")
}

// Publish builds, packages and pushes the feature to REGISTRY (ghcr.io; localhost:PORT for a local one) as REGISTRY/claude-sandbox/features/claude-sandbox.
func (Feature) Publish(registry string) error {
	cli, err := devcontainerCLI()
	if err != nil {
		return err
	}
	p, err := features.Publish(cli, ".", registry)
	if err != nil {
		return err
	}
	fmt.Printf("published %s to %s/%s: tags %v, digest %s\n", p.Version, registry, features.Namespace, p.Tags, p.Digest)
	return nil
}

// devcontainerCLI is the pinned devcontainer CLI from the user's cache,
// installed there on first use; its log goes to stderr.
func devcontainerCLI() (features.CLI, error) {
	cache, err := features.DefaultCLICache()
	if err != nil {
		return features.CLI{}, err
	}
	path, err := features.DevcontainerCLI(cache)
	if err != nil {
		return features.CLI{}, err
	}
	return features.CLI{Path: path, Log: os.Stderr}, nil
}
