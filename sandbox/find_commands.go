// The files Claude Code's settings name in commands (the user's and the
// project's), which a Claude Code outside the sandbox runs: the policy
// holds them read-only. What a dev container's files name is
// find_devcontainer.go's, what git's files name find_gitconfig.go's.

package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/shellcmd"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
	"github.com/tailscale/hujson"
)

// ClaudeCommandFiles are the files under ~/.claude that the user's
// settings, and the home's local settings as a project's, name as
// commands: a status line script, hook scripts kept outside
// ~/.claude/hooks, a helper. ~/.claude is writable inside, and a Claude
// Code outside the sandbox (another container sharing ~/.claude, one
// started in the home) runs them, so the sandbox holds them read-only. The
// settings files are themselves read-only inside, so what they name is the
// user's choice. Only paths written out in a command count (~/, $HOME/,
// ${HOME}/ or the home's absolute path). A program the shell picks in a
// directory (~/.claude/scripts/*.sh, ~/.claude/bin/run-$MODE, or the
// script of bash ~/.claude/status.d/*.sh) holds that directory, marked
// with a trailing "/", as ProjectCommandFiles does, and so does the
// directory below ~/.claude a Python, Perl or Ruby command loads modules
// from first; one that
// cannot be held (~/.claude, the working directory) refuses the launch.
func ClaudeCommandFiles(home string) ([]string, error) {
	commands, err := claudeSettingsCommands(home)
	if err != nil {
		return nil, err
	}
	return commandPaths(home, commands)
}

// claudeSettingsCommands are the commands that the Claude settings of the
// project at dir (.claude/settings.json and settings.local.json; for the
// home, the user's settings and the home's local ones) name; a missing,
// empty or unparsable file names none, since Claude Code does not load it
// either.
func claudeSettingsCommands(dir string) ([]settingsCommand, error) {
	var commands []settingsCommand
	for _, name := range []string{"settings.json", "settings.local.json"} {
		file := filepath.Join(dir, ".claude", name)
		b, err := readFile(file)
		if err != nil {
			return nil, err
		}
		std, err := hujson.Standardize(b)
		if len(bytes.TrimSpace(b)) == 0 || err != nil {
			continue
		}
		var settings map[string]json.RawMessage
		if json.Unmarshal(std, &settings) == nil {
			for _, c := range settingsCommands(settings) {
				commands = append(commands, settingsCommand{file, c})
			}
		}
	}
	return commands, nil
}

// A settingsCommand is a command of a Claude settings file.
type settingsCommand struct{ file, line string }

// ProjectCommandFiles are the files in the workspace that the project's
// Claude settings (.claude/settings.json and settings.local.json, both
// protected, so the user's choice) name in commands: hook scripts, a
// status line, helpers, and what the programs there read, such as a
// configuration given as an argument. A Claude Code started in the
// workspace outside the sandbox (on the host, where no lock-down holds
// project hooks) runs them, so the sandbox holds them read-only. The
// commands are read as a shell reads them (shellcmd), each simple command
// of a list, a -c line or a wrapper. A word is a path when it starts with
// the project's directory ($CLAUDE_PROJECT_DIR/, ${CLAUDE_PROJECT_DIR}/,
// quoted or not, or written out) or is relative and holds a "/". Only
// files count: a directory named as an argument (a formatter's target)
// stays writable; a missing path counts when it is the program of one of
// the commands, or the script its shell or interpreter runs (shellcmd's
// Programs), so that it cannot appear. Where the shell picks either in a
// directory (hooks/*.sh, hooks/$NAME.sh, bash hooks/*.sh), that directory
// is held, marked with a trailing "/": whatever a session put there could
// be the one that runs. A script a shell reads from its input or through
// cat (sh < x.sh, cat x.sh | sh) counts as its script. A command that
// runs Python, Perl or Ruby holds the directories it loads modules from
// first (a Python script's, -I's), and one whose first directory is the
// workspace's root (python3 -c, -m, a script there; -I.) refuses the
// launch (find_importdirs.go). The paths are
// workspace-relative and sorted.
func ProjectCommandFiles(ws string) ([]string, error) {
	commands, err := claudeSettingsCommands(ws)
	if err != nil {
		return nil, err
	}
	return workspaceCommandFiles(ws, commands)
}

// UserCommandFilesInWorkspace are the files in the workspace at ws that
// the user's settings (~/.claude/settings.json) name in commands, read as
// ProjectCommandFiles reads the project's: a Claude Code started in the
// workspace outside the sandbox runs the user's hooks, status line and
// helpers there, so a relative path (bash check.sh, ./tools/x.sh) or one
// through $CLAUDE_PROJECT_DIR is the workspace's file. The home's own
// local settings apply only to a Claude Code started in the home.
func UserCommandFilesInWorkspace(ws, home string) ([]string, error) {
	commands, err := claudeSettingsCommands(home)
	if err != nil {
		return nil, err
	}
	user := filepath.Join(home, ".claude", "settings.json")
	commands = slices.DeleteFunc(commands, func(c settingsCommand) bool { return c.file != user })
	return workspaceCommandFiles(ws, commands)
}

// workspaceCommandFiles are the files in the workspace at ws that
// commands name, run there (see ProjectCommandFiles).
func workspaceCommandFiles(ws string, commands []settingsCommand) ([]string, error) {
	pc := projectCommands{ws: ws, seen: map[string]bool{}}
	var refused []error
	for _, c := range commands {
		for _, cmd := range shellcmd.Commands(c.line, "CLAUDE_PROJECT_DIR") {
			dirs, err := projectImportDirs(ws, c, cmd)
			refused = append(refused, err)
			for _, d := range dirs {
				pc.keep(d)
			}
			pc.command(cmd)
		}
	}
	sort.Strings(pc.out)
	return pc.out, errors.Join(refused...)
}

// projectCommands collects the files of ProjectCommandFiles.
type projectCommands struct {
	ws   string
	seen map[string]bool
	out  []string
}

// keep adds a workspace-relative path, once.
func (pc *projectCommands) keep(rel string) {
	if !pc.seen[rel] {
		pc.seen[rel] = true
		pc.out = append(pc.out, rel)
	}
}

// add keeps the file word names, if it names one that counts, or for a
// program the directory the shell picks it in.
func (pc *projectCommands) add(word string, program bool) {
	rel, ok := projectFile(pc.ws, word, program)
	if !ok && program {
		rel, ok = programDir(pc.ws, word)
	}
	if ok {
		pc.keep(rel)
	}
}

// command adds the files one simple command names.
func (pc *projectCommands) command(cmd shellcmd.Command) {
	programs := cmd.Programs()
	for i, word := range cmd.Words {
		// The assignments before the program count as it does.
		program := len(programs) == 0 || i <= programs[0] || slices.Contains(programs, i)
		if slices.Contains(programs[min(1, len(programs)):], i) {
			word = scriptPath(word)
		}
		pc.add(word, program)
		if name, value, assignment := strings.Cut(word, "="); assignment && !strings.Contains(name, "/") {
			pc.add(value, program)
		}
	}
	for _, word := range cmd.Operands {
		pc.add(word, false)
	}
	for _, word := range cmd.Scripts {
		pc.add(scriptPath(word), true)
	}
}

// scriptPath returns a script's word as a path: a shell or an interpreter
// reads a script named without a directory (bash check.sh, python3
// lint.py) from its working directory, as it reads ./check.sh (bash, and
// bash's "." and zsh's source once PATH has none, look in PATH too: the
// working directory's file wins, or is the one found).
func scriptPath(word string) string {
	if word == "-" || strings.ContainsAny(word, "/$~") {
		return word
	}
	return "./" + word
}

// projectFile returns the workspace-relative path of the file word names
// in the project at ws, if it names one that counts (see
// ProjectCommandFiles): an existing file, or a missing one that is the
// program a command starts.
func projectFile(ws, word string, program bool) (string, bool) {
	p := projectPath(word, ws)
	if p == "" || p == ws || !subtree.Of(ws).Contains(p) {
		return "", false
	}
	fi, err := os.Lstat(p)
	missing := errors.Is(err, fs.ErrNotExist)
	if (err != nil && !missing) || (err == nil && fi.IsDir()) || (missing && !program) {
		return "", false
	}
	rel, _ := filepath.Rel(ws, p)
	return rel, true
}

// programDir returns, for a program word whose last component the shell
// computes (a glob, a variable), the workspace-relative directory it picks
// from, with a trailing "/", when that directory is in the project at ws
// and is one (or a link), or is missing. The workspace itself is never held so: its
// root stays writable.
func programDir(ws, word string) (string, bool) {
	dir, base := path.Split(word)
	if dir == "" || !strings.Contains(base, "$") || strings.Contains(strings.TrimPrefix(dir, "$CLAUDE_PROJECT_DIR/"), "$") {
		return "", false
	}
	p := projectPath(dir, ws)
	if p == "" || p == ws || !subtree.Of(ws).Contains(p) {
		return "", false
	}
	// A link is held too: the protections follow it to what it leads to.
	if !mayHoldPrograms(p) {
		return "", false
	}
	rel, _ := filepath.Rel(ws, p)
	return rel + "/", true
}

// mayHoldPrograms reports whether p can be a directory the shell picks a
// program in: a directory, a link (to one, or to be refused), or missing
// (it could appear). A file holds none; an error reading p says nothing.
func mayHoldPrograms(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0
}

// projectPath returns word as an absolute clean path when it is a path in
// the project at ws (see ProjectCommandFiles), else "". A word holding
// another "$" is one the shell computes (shellcmd).
func projectPath(word, ws string) string {
	if rest, ok := strings.CutPrefix(word, "$CLAUDE_PROJECT_DIR/"); ok && !strings.Contains(rest, "$") {
		return filepath.Join(ws, rest)
	}
	if strings.Contains(word, "$") || strings.HasPrefix(word, "~") {
		return ""
	}
	if filepath.IsAbs(word) {
		return filepath.Clean(word)
	}
	if !strings.Contains(word, "/") {
		return ""
	}
	return filepath.Join(ws, word)
}

// commandPaths are the files below ~/.claude that commands name, sorted,
// but for those the policy holds itself: a word of a command read as a
// shell reads it (shellcmd), or the value of a NAME=VALUE word, written
// out as a path.
func commandPaths(home string, commands []settingsCommand) ([]string, error) {
	claudeDir := filepath.Join(home, ".claude")
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p != "" && filepath.Clean(p) != claudeDir && subtree.Of(claudeDir).Contains(p) && !seen[p] && !heldInHome(home, p) {
			seen[p] = true
			out = append(out, p)
		}
	}
	var refused []error
	for _, c := range commands {
		for _, cmd := range shellcmd.Commands(c.line, "HOME") {
			dirs, err := homeImportDirs(home, c, cmd)
			refused = append(refused, err)
			for _, d := range dirs {
				add(d)
			}
			for _, word := range cmd.Words {
				add(expandHome(word, home))
				if _, value, assignment := strings.Cut(word, "="); assignment {
					add(expandHome(value, home))
				}
			}
			for _, i := range cmd.Programs() {
				if dir, ok := homeProgramDir(home, cmd.Words[i]); ok {
					add(dir)
				}
			}
			for _, word := range slices.Concat(cmd.Operands, cmd.Scripts) {
				add(expandHome(word, home))
			}
		}
	}
	sort.Strings(out)
	return out, errors.Join(refused...)
}

// homeProgramDir returns, for a program word whose last component the
// shell computes (a glob, a variable), the directory it picks from, with a
// trailing "/", when that directory is written out in the home and is one,
// or is missing (the launch makes it). Whether it is below ~/.claude, and
// not held already, commandPaths checks.
func homeProgramDir(home, word string) (string, bool) {
	dir, base := path.Split(word)
	if dir == "" || !strings.Contains(base, "$") {
		return "", false
	}
	p := expandHome(dir, home)
	if p == "" {
		return "", false
	}
	if !mayHoldPrograms(p) {
		return "", false
	}
	return p + "/", true
}

// settingsCommands are the commands the settings name: the values of
// commandKeys (a string, or an object's command) and every hook's.
func settingsCommands(settings map[string]json.RawMessage) []string {
	var commands []string
	for _, key := range commandKeys {
		var s string
		var obj struct{ Command string }
		if json.Unmarshal(settings[key], &s) == nil {
			commands = append(commands, s)
		} else if json.Unmarshal(settings[key], &obj) == nil {
			commands = append(commands, obj.Command)
		}
	}
	var hooks map[string][]struct {
		Hooks []struct{ Command string }
	}
	if json.Unmarshal(settings["hooks"], &hooks) != nil {
		return commands
	}
	for _, groups := range hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				commands = append(commands, h.Command)
			}
		}
	}
	return commands
}

// heldInHome reports whether p is already bound read-only (claudeReadOnly),
// the workspace's own (claudeOwnState) or hidden (the IDE's lock files) by
// the policy itself.
func heldInHome(home, p string) bool {
	held := append([]homePath{{rel: ".claude/ide"}}, claudeReadOnly...)
	for _, h := range append(held, claudeOwnState...) {
		if subtree.Of(filepath.Join(home, h.rel)).Contains(p) {
			return true
		}
	}
	return false
}

// expandHome returns word as an absolute clean path when it is one or
// starts with the home (~/, or $HOME/ in any spelling: shellcmd), else "".
// A word holding another "$" is one the shell computes.
func expandHome(word, home string) string {
	for _, prefix := range []string{"~/", "$HOME/"} {
		if rest, ok := strings.CutPrefix(word, prefix); ok && !strings.Contains(rest, "$") {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(word) && !strings.Contains(word, "$") {
		return filepath.Clean(word)
	}
	return ""
}
