package installer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/gitconfig"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// gitBlock is what install adds to the system git configuration, and what
// uninstall removes, byte for byte. With it, git (2.38+) uses a bare
// repository only when it is named (--git-dir, GIT_DIR), never one it finds
// by walking up from the working directory: a session could make one
// anywhere in the workspace (HEAD, config, objects/, refs/ need no .git
// name), and the editor's or a shell prompt's git would run its config.
const gitBlock = `# claude-sandbox: git uses a bare repository only when it is named, never one
# it finds on its own, which a sandboxed session could have made (ADR 0015)
[safe]
	bareRepository = explicit
`

// systemGitConfig is the system configuration file of the git installed
// here: git names it itself (its editor is asked to edit the file, and
// echo prints the name). Under a test root, and when git is missing or
// does not say, it is layout.SystemGitConfig.
func (in *run) systemGitConfig() string {
	if in.opts.Root != "/" {
		return layout.SystemGitConfig
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return layout.SystemGitConfig
	}
	cmd := exec.Command(git, "config", "--system", "--edit")
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "GIT_EDITOR=echo"}
	cmd.Dir = "/"
	out, err := cmd.Output()
	p := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(p) || strings.Contains(p, "\n") {
		return layout.SystemGitConfig
	}
	return filepath.Clean(p)
}

// planGitConfig adds gitBlock to the system git configuration unless the
// setting there is already explicit. The file's other lines stay as they
// are; one that git would refuse stops the install with its line.
func (in *run) planGitConfig() error {
	name := in.systemGitConfig()
	p := in.path(name)
	old, mode, err := readWithMode(p)
	if err != nil {
		return err
	}
	if old != nil {
		entries, err := gitconfig.Parse(name, old)
		if err != nil {
			return fmt.Errorf("the existing git configuration is not valid, so it was left alone: %w", err)
		}
		if bareRepository(entries) == "explicit" {
			return nil
		}
	}
	next := old
	if len(next) > 0 && next[len(next)-1] != '\n' {
		next = append(next, '\n')
	}
	next = append(append([]byte{}, next...), gitBlock...)
	what := "wrote " + name + " (safe.bareRepository = explicit)"
	if old != nil {
		what = "updated " + name + " (safe.bareRepository = explicit)"
	}
	in.add(what, lineDiff(name, old, next), func() error { return writeAtomic(p, next, mode) })
	return nil
}

// planGitConfigRemoval takes out exactly what install added, and the file
// if nothing else is left in it.
func (in *run) planGitConfigRemoval() error {
	name := in.systemGitConfig()
	p := in.path(name)
	old, mode, err := readWithMode(p)
	if err != nil || old == nil {
		return err
	}
	i := bytes.Index(old, []byte(gitBlock))
	if i < 0 {
		return nil
	}
	next := append(append([]byte{}, old[:i]...), old[i+len(gitBlock):]...)
	if len(bytes.TrimSpace(next)) == 0 {
		in.add("removed "+name, "", func() error { return os.Remove(p) })
		return nil
	}
	in.add("removed safe.bareRepository = explicit from "+name+" (its other lines stay)", lineDiff(name, old, next), func() error { return writeAtomic(p, next, mode) })
	return nil
}

// bareRepository is the value git takes for safe.bareRepository from these
// entries: the last one.
func bareRepository(entries []gitconfig.Entry) string {
	v := ""
	for _, e := range entries {
		if e.Name == "safe.barerepository" {
			v = e.Value
		}
	}
	return v
}

// readWithMode returns a file's content and mode; nil content (and 0644)
// for a missing file.
func readWithMode(p string) ([]byte, os.FileMode, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, nil
	}
	if err != nil {
		return nil, 0, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, 0, err
	}
	return data, fi.Mode().Perm(), nil
}
