// The files a dev container's configuration names, which a rebuild runs
// outside the sandbox: the policy holds them read-only.

package sandbox

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
	"github.com/tailscale/hujson"
)

// DerivedProtect: some files that run code outside the sandbox are named
// by other files, a dev container's Dockerfile and compose files by
// devcontainer.json. DerivedProtect reads those (all of them protected
// themselves, so the model cannot have changed them) and returns the
// workspace-relative paths to protect as well. What git's files name is
// found by protectGit.
func DerivedProtect(ws string) ([]string, error) {
	var out []string
	configs := []string{filepath.Join(ws, ".devcontainer.json"), filepath.Join(ws, ".devcontainer", "devcontainer.json")}
	more, _ := filepath.Glob(filepath.Join(ws, ".devcontainer", "*", "devcontainer.json"))
	for _, cfg := range append(configs, more...) {
		files, err := devcontainerFiles(cfg)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			p := filepath.Clean(filepath.Join(filepath.Dir(cfg), f))
			if p == ws || !subtree.Of(ws).Contains(p) {
				continue // outside the workspace it is not writable anyway
			}
			rel, _ := filepath.Rel(ws, p)
			out = append(out, rel)
		}
	}
	return out, nil
}

// devcontainerFiles returns the Dockerfile and compose files a
// devcontainer.json names, relative to its directory. A missing file names
// nothing; one that does not parse stops the launch, because what it names
// cannot be known.
func devcontainerFiles(path string) ([]string, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, nil
	}
	std, err := hujson.Standardize(b)
	var cfg struct {
		DockerFile        string `json:"dockerFile"`
		Build             struct{ Dockerfile string }
		DockerComposeFile json.RawMessage
	}
	if err == nil {
		err = json.Unmarshal(std, &cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("%s does not parse (%w); the sandbox protects the files it names, so fix it before starting claude", path, err)
	}
	var files []string
	for _, f := range []string{cfg.DockerFile, cfg.Build.Dockerfile} {
		if f != "" {
			files = append(files, f)
		}
	}
	if len(cfg.DockerComposeFile) > 0 {
		var one string
		var many []string
		if json.Unmarshal(cfg.DockerComposeFile, &one) == nil {
			many = []string{one}
		} else if err := json.Unmarshal(cfg.DockerComposeFile, &many); err != nil {
			return nil, fmt.Errorf("%s: dockerComposeFile is neither a string nor a list of strings", path)
		}
		files = append(files, many...)
	}
	return files, nil
}
