package targets

import (
	"github.com/claude-sandbox/claude-sandbox/features"
	"github.com/magefile/mage/mg"
)

// Feature holds the devcontainer feature's targets.
type Feature mg.Namespace

// Sync copies devcontainer-feature.json into the feature (features/src/claude-sandbox).
func (Feature) Sync() error {
	return features.Sync(".")
}
