// Package features is the devcontainer feature's metadata: the top-level
// devcontainer-feature.json is its source, and features/src/claude-sandbox
// is the feature as the devcontainer CLI packages it (the metadata copied
// there, install.sh, the README, and the static binaries for each
// architecture under bin/). It reads the metadata and nothing more, so
// promote can pin the version it was built with; package
// features/packaging builds, packages and publishes the feature.
package features

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Paths relative to the module root.
const (
	Source = "devcontainer-feature.json"        // the metadata, edited by hand
	Dir    = "features/src/claude-sandbox"      // the feature the CLI packages
	Copy   = Dir + "/devcontainer-feature.json" // generated from Source
)

// Metadata is the part of the metadata the build reads.
type Metadata struct {
	ID      string `json:"id"`
	Version string `json:"version"`
}

// ReadMetadata reads the source metadata under the module root.
func ReadMetadata(root string) (Metadata, error) {
	var m Metadata
	data, err := os.ReadFile(filepath.Join(root, Source))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: %w", Source, err)
	}
	if m.ID == "" || m.Version == "" {
		return m, fmt.Errorf("%s: id and version are required", Source)
	}
	return m, nil
}
