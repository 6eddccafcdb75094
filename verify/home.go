package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/gitconfig"
	"github.com/claude-sandbox/claude-sandbox/internal/envlist"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// homeTmpfs: the home is a tmpfs of the sandbox's own, so nothing of the
// real home (ssh keys, .netrc, shell history, rc files) is there but what
// the policy binds back.
func homeTmpfs(f *facts) (string, error) {
	if err := firstError(f.mountsErr, f.launchErr); err != nil {
		return "", err
	}
	home := f.launch.launch.Home
	if err := f.ownTmpfs(home); err != nil {
		return "", err
	}
	return home + " is the sandbox's own tmpfs", nil
}

// homeMounts: nothing is mounted in the home but what the policy binds
// there: ~/.claude, ~/.claude.json, the read-only settings, hooks and
// plugins, the IDE mask, the real binary, share-home entries.
func homeMounts(f *facts) (string, error) {
	if err := firstError(f.mountsErr, f.launchErr); err != nil {
		return "", err
	}
	home := f.launch.launch.Home
	var names, extra []string
	for _, m := range f.mounts {
		if m.Point == home || !subtree.Of(home).Contains(m.Point) {
			continue
		}
		name := "~/" + strings.TrimPrefix(m.Point, home+"/")
		if f.planned(m, false) {
			names = append(names, name)
		} else {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	sort.Strings(names)
	switch {
	case len(extra) > 0:
		return "", fmt.Errorf("mounted in the home without the policy: %s", strings.Join(extra, ", "))
	case len(names) == 0:
		return "nothing is mounted in the home", nil
	}
	return "only the policy's: " + strings.Join(names, ", "), nil
}

// claudeSettingsReadOnly: ~/.claude/settings.json, hooks, plugins, local
// and the files the settings name as commands are read-only, so the
// session cannot plant hooks, plugins or commands that run in later
// sessions or in a Claude outside the sandbox.
func claudeSettingsReadOnly(f *facts) (string, error) {
	if f.launchErr != nil {
		return "", f.launchErr
	}
	home := f.launch.launch.Home
	var paths []string
	for _, rel := range sandbox.ClaudeReadOnly() {
		paths = append(paths, filepath.Join(home, rel))
	}
	commands, err := sandbox.ClaudeCommandFiles(home)
	if err != nil {
		return "", err
	}
	return allReadOnly(append(paths, commands...)...)
}

// claudeStateOwn: the parts of ~/.claude that Claude Code runs or acts on
// without asking (background jobs, the service's state, shell snapshots,
// hooks' session scripts, upload git directories, rm guards) are each a
// mount of the workspace's own directory, so nothing a session writes there
// reaches a Claude Code outside.
func claudeStateOwn(f *facts) (string, error) {
	if err := firstError(f.mountsErr, f.launchErr); err != nil {
		return "", err
	}
	home := f.launch.launch.Home
	for _, rel := range sandbox.ClaudeOwnState() {
		own, _ := filepath.Rel(filepath.Join(home, layout.UserCache), sandbox.StateDir(home, f.launch.plan.Workspace, rel))
		m, ok := f.mountAt(filepath.Join(home, rel))
		switch {
		case !ok:
			return "", fmt.Errorf("~/%s is no mount: what a session writes there lands in the real one, which a Claude Code outside acts on", rel)
		case !strings.HasSuffix(m.Root, "/"+own):
			return "", fmt.Errorf("~/%s is mounted from %s, not from the workspace's own %s", rel, m.Root, own)
		}
	}
	return fmt.Sprintf("%d folders of ~/.claude are the workspace's own, under ~/.cache/claude-sandbox/state", len(sandbox.ClaudeOwnState())), nil
}

// ideLocksHidden: ~/.claude/ide is a tmpfs of the sandbox's own, so the
// IDE extension's lock files (the port and token of a websocket whose
// tools run outside the sandbox) are not there.
func ideLocksHidden(f *facts) (string, error) {
	if err := firstError(f.mountsErr, f.launchErr); err != nil {
		return "", err
	}
	ide := filepath.Join(f.launch.launch.Home, ".claude/ide")
	if err := f.ownTmpfs(ide); err != nil {
		return "", err
	}
	entries, err := os.ReadDir(ide)
	if err != nil {
		return "", err
	}
	if len(entries) > 0 {
		return fmt.Sprintf("%s is the sandbox's own tmpfs (%d entries written inside)", ide, len(entries)), nil
	}
	return ide + " is the sandbox's own tmpfs, empty", nil
}

// localBinClaude: ~/.local/bin/claude, the name Claude's self-check
// expects, is the real binary (same device and inode) and read-only, so
// the session cannot replace what a later `claude` here runs.
func localBinClaude(f *facts) (string, error) {
	if f.launchErr != nil {
		return "", f.launchErr
	}
	p := filepath.Join(f.launch.launch.Home, ".local/bin/claude")
	if same, err := sameFile(p, f.paths.RealBinary); err != nil {
		return "", err
	} else if !same {
		return "", fmt.Errorf("%s is not the real binary %s", p, f.paths.RealBinary)
	}
	if _, err := readOnly(p); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s is %s, read-only", p, f.paths.RealBinary), nil
}

// claudeOnPath: the `claude` a shell here finds first on PATH is the real
// binary or the launcher (which, inside, runs the real binary directly),
// on a read-only mount: nothing the session wrote runs in its place.
func claudeOnPath(f *facts) (string, error) {
	p, err := lookPath(f.environ, "claude")
	if err != nil {
		return "", err
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	what := ""
	for _, c := range []struct{ path, what string }{
		{f.paths.RealBinary, "the real Claude Code"},
		{exe, "the launcher, which inside runs the real binary directly"},
		{layout.LauncherBinary, "the launcher, which inside runs the real binary directly"},
	} {
		if same, _ := sameFile(p, c.path); same && what == "" {
			what = c.what
		}
	}
	if what == "" {
		return "", fmt.Errorf("%s is neither the real binary nor the launcher", p)
	}
	if _, err := readOnly(p); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s is %s, read-only", p, what), nil
}

// lookPath finds name on environ's PATH the way a shell does.
func lookPath(environ []string, name string) (string, error) {
	path := envlist.Map(environ)["PATH"] // the last definition, which a shell keeps
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not on PATH (%s)", name, path)
}

func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}

// gitConfigAllowed: the git configuration git reads in the home as the
// user's global one (the XDG file and ~/.gitconfig, with every include)
// holds only variables on the policy's allow-list, which the launcher made
// it by: no hooks directory, command, credential helper, URL rewrite or
// signing key of the user's reached the sandbox. A file a share-home line
// binds is the user's own, as the admin chose, and is not read.
func gitConfigAllowed(f *facts) (string, error) {
	if err := firstError(f.launchErr, f.startEnvErr); err != nil {
		return "", err
	}
	home := f.launch.launch.Home
	shared := map[string]bool{}
	for _, m := range f.launch.plan.Mounts {
		if m.Rule == sandbox.RuleShareHome {
			shared[m.Dest] = true
		}
	}
	var names, sharedFiles, outside []string
	for _, file := range sandbox.UserGitConfigs(launchenv.Read(f.startEnv), home) {
		if shared[file] {
			sharedFiles = append(sharedFiles, file)
			continue
		}
		entries, _, err := gitconfig.Load(file, home)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			if _, ok := sandbox.GitConfigCarried(e.Name); ok {
				names = append(names, e.Name)
			} else {
				outside = append(outside, fmt.Sprintf("%s (%s:%d)", e.Name, e.File, e.Line))
			}
		}
	}
	if len(outside) > 0 {
		return "", fmt.Errorf("the home's git configuration holds what the allow-list does not carry (the launcher's doing, or a session's own `git config --global`): %s", strings.Join(outside, ", "))
	}
	detail := fmt.Sprintf("%d variables, all on the allow-list", len(names))
	if len(names) == 0 {
		detail = "no variable"
	}
	if len(sharedFiles) > 0 {
		detail += "; shared by share-home, the user's own: " + strings.Join(sharedFiles, ", ")
	}
	return detail, nil
}
