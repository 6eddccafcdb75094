package promote

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// LockPath is the lock file: the version of the last promote and the hash
// of each curated file it wrote, so --check can tell a file changed
// upstream (the lock's hash is not this version's) from one edited locally
// (the file's hash is not the lock's).
const LockPath = ".claude/claude-sandbox.lock.json"

type lock struct {
	Version string `json:"version"`
	// Install is "postCreate" when the repository installs claude-sandbox
	// from postCreate.sh (promote --no-feature), empty for the feature.
	Install string            `json:"install,omitempty"`
	Files   map[string]string `json:"files"`
}

func parseLock(data []byte) (lock, error) {
	var l lock
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return l, jsonError(LockPath, data, err)
	}
	if l.Version == "" {
		return l, fmt.Errorf("%s: no version (delete it and promote again)", LockPath)
	}
	return l, nil
}

func (l lock) bytes() []byte {
	data, _ := json.MarshalIndent(l, "", "  ") // a struct of strings always marshals
	return append(data, '\n')
}
