package packaging

import (
	"fmt"
	"path/filepath"

	"github.com/claude-sandbox/claude-sandbox/features"
)

// Where the devcontainer CLI finds and places the feature.
const (
	Collection   = "features/src"            // the CLI's collection: one folder per feature, features.Dir the only one
	Namespace    = "claude-sandbox/features" // a registry holds the feature as REGISTRY/Namespace/ID:TAG
	DocsRegistry = "ghcr.io"                 // the registry the README's usage example names
)

// Package syncs the metadata and builds the binaries into the feature
// under root, then has the CLI package the collection into out (emptied
// first): what a publish would push, to inspect or attach to a release.
func Package(cli CLI, root, out string) error {
	if err := prepare(root); err != nil {
		return err
	}
	return cli.Package(filepath.Join(root, Collection), out)
}

// GenerateDocs rewrites the feature's README.md under root from the
// metadata and the hand-written NOTES.md beside it.
func GenerateDocs(cli CLI, root string) error {
	if err := Sync(root); err != nil {
		return err
	}
	return cli.GenerateDocs(root, Collection, DocsRegistry, Namespace)
}

// Publish prepares the feature under root as Package does and publishes it
// to registry under Namespace.
func Publish(cli CLI, root, registry string) (Published, error) {
	m, err := features.ReadMetadata(root)
	if err != nil {
		return Published{}, err
	}
	if err := prepare(root); err != nil {
		return Published{}, err
	}
	return publish(cli, filepath.Join(root, Collection), registry, m)
}

// prepare makes the feature folder what its package must hold.
func prepare(root string) error {
	if err := Sync(root); err != nil {
		return err
	}
	return BuildBinaries(root)
}

// publish publishes the collection src and returns what became of the
// feature m. A version the registry already has is an error: the CLI skips
// it and exits 0, but a publish that changed nothing should not look done.
func publish(cli CLI, src, registry string, m features.Metadata) (Published, error) {
	report, err := cli.Publish(src, registry, Namespace)
	if err != nil {
		return Published{}, err
	}
	p := report[m.ID]
	if p.Version == "" {
		return p, fmt.Errorf("publishing %s %s to %s: not published; the registry already has that version (raise it in %s)", m.ID, m.Version, registry, features.Source)
	}
	return p, nil
}
