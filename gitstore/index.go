package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/gitconfig"
	"github.com/claude-sandbox/claude-sandbox/internal/gitindex"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/warden"
)

// copyIndex carries the stored git directory's index (from) into the new
// one (to), checked as the warden checks an index a session renames into
// place (ADR 0038): git outside writes into the working tree whatever it
// lists, so every path must be one git itself would check out and hold no
// name the sandbox is refused anywhere, unless the working tree's file
// there holds that very entry. A split index is checked merged with its
// shared index, which is carried with it. The index is checked, not rebuilt from the
// tree: what a session staged and did not commit stays staged, and a tree
// lists what the checked index would refuse as well.
func (a *Adoption) copyIndex(from, to *tree) error {
	path := from.where("index")
	data, err := from.read("index")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	hashSize, err := newHashSize(to)
	if err != nil {
		return err
	}
	outside, named := sandbox.NameRules()
	read := from.read
	ix, err := warden.CheckIndex(data, hashSize, read, a.Dir, outside, named)
	if err != nil {
		return fmt.Errorf("%s: %v; adopt carries no index git outside would write from; unstage those paths inside (git rm --cached) and adopt again", path, err)
	}
	if ix.Shared != "" {
		sharedName := "sharedindex." + ix.Shared
		shared, err := read(sharedName)
		if err != nil {
			return err
		}
		if err := to.write(sharedName, shared, 0o644); err != nil {
			return err
		}
	}
	return to.write("index", data, 0o644)
}

// newHashSize is the hash size of the object format of the repository
// adopt made at dir, with git outside.
func newHashSize(dir *tree) (int, error) {
	path := dir.where("config")
	data, err := dir.read("config")
	if err != nil {
		return 0, err
	}
	entries, err := gitconfig.Parse(path, data)
	if err != nil {
		return 0, err
	}
	size := gitindex.SHA1
	for _, e := range entries {
		if e.Name == "extensions.objectformat" && strings.EqualFold(e.Value, "sha256") {
			size = gitindex.SHA256
		}
	}
	return size, nil
}
