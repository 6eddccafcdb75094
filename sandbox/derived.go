package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
)

// Some files that run code outside the sandbox are named by other files: a
// dev container's Dockerfile and compose files by devcontainer.json.
// DerivedProtect reads those (all of them protected themselves, so the
// model cannot have changed them) and returns the workspace-relative paths
// to protect as well. What git's files name is found by protectGit.
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
			if p == ws || !within(ws, p) {
				continue // outside the workspace it is not writable anyway
			}
			rel, _ := filepath.Rel(ws, p)
			out = append(out, rel)
		}
	}
	return out, nil
}

// gitdirFile reads the "gitdir: PATH" line of a .git file.
func gitdirFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", path, errors.Unwrap(err))
	}
	line, _, _ := strings.Cut(string(b), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok || strings.TrimSpace(target) == "" {
		return "", fmt.Errorf("%s is a file but not a \"gitdir: PATH\" link; the sandbox cannot tell which git directory to protect", path)
	}
	return strings.TrimSpace(target), nil
}

// readFile returns a regular file's content, or nil for a missing file or a
// directory (a stub another session holds).
func readFile(path string) ([]byte, error) {
	if fi, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || (err == nil && fi.IsDir()) {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, errors.Unwrap(err))
	}
	return b, nil
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
		return nil, fmt.Errorf("%s does not parse (%v); the sandbox protects the files it names, so fix it before starting claude", path, err)
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
