package installer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// An older installer of Claude Code put it in ~/.claude/local (npm's
// node_modules and a `claude` wrapper script) and added an alias
// `claude=~/.claude/local/claude` to the shell rc files; other tools look
// for Claude Code there too. The install takes the real binary from there
// like from any other install, and makes that path run the launcher, so
// the alias does as well; the original is kept beside it for uninstall.
// The sandbox holds ~/.claude/local read-only, so a session cannot put
// anything there that the alias would run outside.

// legacyLocal is the older installer's `claude` in home.
func legacyLocal(home string) string { return filepath.Join(home, ".claude/local/claude") }

// legacyBackup is where the install keeps what was at legacyLocal.
func legacyBackup(home string) string { return legacyLocal(home) + ".before-claude-sandbox" }

// legacySources are the real binaries an older local install holds: its
// npm package's binary (the wrapper script itself is not one).
func (in *run) legacySources(home string) []*source {
	from := "the older local install in " + home
	var out []*source
	if p, ok := in.resolve(in.path(legacyLocal(home))); ok {
		out = append(out, &source{path: p, from: from})
	}
	modules := in.path(filepath.Join(home, ".claude/local/node_modules"))
	for _, p := range []string{filepath.Join(modules, NPMPackage, "bin/claude.exe"), filepath.Join(modules, npmPlatformPackage(), "claude")} {
		out = append(out, &source{path: p, from: from})
	}
	return out
}

// planLegacyLinks points each home's ~/.claude/local/claude, where there
// is one, at the launcher, keeping the original as legacyBackup.
func (in *run) planLegacyLinks() {
	for _, home := range in.homes() {
		p := legacyLocal(home)
		host := in.path(p)
		if _, err := os.Lstat(host); err != nil {
			continue
		}
		if target, err := os.Readlink(host); err == nil && target == layout.LauncherBinary {
			continue
		}
		what := fmt.Sprintf("replaced %s, which an older installer's alias runs, with a link to the launcher (the original is kept as %s)", p, legacyBackup(home))
		in.add(what, "", func() error {
			// A second name first, then the link over the first: killed at
			// any point, the path holds the original or the link.
			backup := in.path(legacyBackup(home))
			if err := os.Remove(backup); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			if err := os.Link(host, backup); err != nil {
				return err
			}
			return symlinkAtomic(layout.LauncherBinary, host)
		})
	}
}

// planLegacyRestore puts back what the install moved aside, or removes
// the link where nothing was kept.
func (in *run) planLegacyRestore() {
	for _, home := range in.homes() {
		p, backup := legacyLocal(home), legacyBackup(home)
		host := in.path(p)
		if target, err := os.Readlink(host); err != nil || target != layout.LauncherBinary {
			continue
		}
		if _, err := os.Lstat(in.path(backup)); err == nil {
			in.add(fmt.Sprintf("put %s back at %s", backup, p), "", func() error { return os.Rename(in.path(backup), host) })
			continue
		}
		in.add("removed the link "+p, "", func() error { return os.Remove(host) })
	}
}
