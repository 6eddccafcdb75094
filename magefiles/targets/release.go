package targets

import (
	"fmt"

	"github.com/claude-sandbox/claude-sandbox/features/packaging"
	"github.com/magefile/mage/mg"
)

// Release holds the targets that pin the GitHub Action to a release's
// binaries and check the release against the pins (docs/ci.md).
type Release mg.Namespace

// Pin builds the binaries and pins their checksums in action.yml: run it, and commit, before tagging a release.
func (Release) Pin() error {
	if err := packaging.BuildBinaries("."); err != nil {
		return err
	}
	sums, err := packaging.Sums(".")
	if err != nil {
		return err
	}
	if err := packaging.PinAction(".", sums); err != nil {
		return err
	}
	fmt.Printf("pinned in %s:\n%s", packaging.ActionFile, sums)
	return nil
}

// Check fails unless the built binaries are those action.yml pins, and writes their SHA256SUMS for the release.
func (Release) Check() error {
	return packaging.CheckPinned(".")
}
