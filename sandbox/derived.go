package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
)

// Some files that run code outside the sandbox are named by other files:
// git's hooks directory by core.hooksPath, a worktree's git directory by its
// .git file, a dev container's Dockerfile and compose files by
// devcontainer.json. DerivedProtect reads those (all of them protected
// themselves, so the model cannot have changed them) and returns the
// workspace-relative paths to protect as well.
func DerivedProtect(ws string) ([]string, error) {
	var out []string
	add := func(p string, dir bool) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		p = filepath.Clean(p)
		if p == ws || !within(ws, p) {
			return // outside the workspace it is not writable anyway
		}
		rel, _ := filepath.Rel(ws, p)
		if dir {
			rel += "/"
		}
		out = append(out, rel)
	}

	gitDir := filepath.Join(ws, ".git")
	if fi, err := os.Lstat(gitDir); err == nil && fi.Mode().IsRegular() {
		target, err := gitdirFile(gitDir)
		if err != nil {
			return nil, err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(ws, target)
		}
		gitDir = filepath.Clean(target)
		for _, p := range []string{"config", "commondir"} {
			add(filepath.Join(gitDir, p), false)
		}
		for _, p := range []string{"hooks", "modules", "worktrees"} {
			add(filepath.Join(gitDir, p), true)
		}
	}
	if hooks, err := hooksPath(filepath.Join(gitDir, "config")); err != nil {
		return nil, err
	} else if hooks != "" {
		add(hooks, true)
	}

	configs := []string{filepath.Join(ws, ".devcontainer.json"), filepath.Join(ws, ".devcontainer", "devcontainer.json")}
	more, _ := filepath.Glob(filepath.Join(ws, ".devcontainer", "*", "devcontainer.json"))
	for _, cfg := range append(configs, more...) {
		files, err := devcontainerFiles(cfg)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			add(filepath.Join(filepath.Dir(cfg), f), false)
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

// hooksPath returns core.hooksPath from a git config file, or "". It reads
// the file itself, not through git, and does not follow [include]s.
func hooksPath(path string) (string, error) {
	b, err := readFile(path)
	if err != nil {
		return "", err
	}
	section, value := "", ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			name, _, _ := strings.Cut(strings.Trim(line, "[]"), " ")
			section = strings.ToLower(strings.TrimSpace(name))
			continue
		}
		key, v, ok := strings.Cut(line, "=")
		if section == "core" && ok && strings.EqualFold(strings.TrimSpace(key), "hookspath") {
			value = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return value, sc.Err()
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
