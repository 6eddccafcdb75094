// The directories a command run outside loads modules from before its
// interpreter's own library (ADR 0036, issue 34): for Python, its working
// directory with -c, -m or a script read from its input, its script's
// directory, PYTHONPATH; for Perl and Ruby, -I and their library
// variables. Every import of the process looks there first, the standard
// library's own too (json imports re), so which module files to hold
// cannot be known: a directory the sandbox can write is held read-only as
// a whole, and one that cannot be held (the workspace's root, a
// repository's top, where the command runs) refuses the launch.

package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/shellcmd"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
)

// pythonFix is what a refusal of a Python command asks the user to do.
const pythonFix = "add -P after the interpreter (Python 3.11 and later; -I before that), or put PYTHONSAFEPATH=1 in front of it, and keep PYTHONPATH to directories the sandbox cannot write"

// libraryFix is what a refusal of a Perl or Ruby command asks.
const libraryFix = "give -I, PERL5LIB and RUBYLIB only directories the sandbox cannot write"

// importRefusal says that command, of file, runs lang with dir first on
// its module path, where a session could put a module.
func importRefusal(file, command, lang, dir, where string) error {
	if lang == "Python" {
		return fmt.Errorf("%s: %q runs Python with %s first on its module path; %s, where a session could put a module that any import loads, the standard library's own included (json imports re); %s", file, command, dir, where, pythonFix)
	}
	return fmt.Errorf("%s: %q runs %s with %s first on its module path; %s, where a session could put a module that a use or require of its name loads; %s", file, command, lang, dir, where, libraryFix)
}

// projectImportDirs returns, for a project command that runs Python,
// Perl or Ruby, the
// workspace-relative directories (with a trailing "/") it imports from
// first that can be held, and refuses one that is the workspace's root,
// where a Claude Code started outside runs the project's commands. A
// directory the shell computes cannot be known, and is skipped (best
// effort, as for every word).
func projectImportDirs(ws string, c settingsCommand, cmd shellcmd.Command) ([]string, error) {
	var out []string
	lang, dirs := cmd.ImportDirs()
	for _, d := range dirs {
		p := projectDir(ws, d)
		switch {
		case p == ws:
			return nil, importRefusal(c.file, c.line, lang, importDirName(d), "a Claude Code started outside runs it in the project's root")
		case p == "" || !subtree.Of(ws).Contains(p) || !mayHoldPrograms(p):
			continue
		}
		rel, _ := filepath.Rel(ws, p)
		out = append(out, rel+"/")
	}
	return out, nil
}

// projectDir returns a directory word of a project command as an
// absolute path, relative ones taken from the workspace, where the
// command runs; "" when the shell computes it or it is in the home.
func projectDir(ws, d string) string {
	if d == "$CLAUDE_PROJECT_DIR" {
		return ws
	}
	if p := projectPath(d, ws); p != "" {
		return p
	}
	if strings.ContainsAny(d, "$~") {
		return ""
	}
	return filepath.Join(ws, d)
}

// homeImportDirs returns, for a command of the user's settings that runs
// Python, Perl or Ruby, the directories below ~/.claude (with a trailing
// "/") it loads modules from first, and refuses ~/.claude itself, which
// cannot be held. A relative directory is taken from the home, where a
// Claude Code started in the home runs it; one started in the workspace
// runs it there, which UserCommandFilesInWorkspace reads.
func homeImportDirs(home string, c settingsCommand, cmd shellcmd.Command) ([]string, error) {
	claudeDir := filepath.Join(home, ".claude")
	var out []string
	lang, dirs := cmd.ImportDirs()
	for _, d := range dirs {
		p := expandHome(d, home)
		switch {
		case d == "$HOME" || d == "~":
			p = home
		case p == "" && !strings.ContainsAny(d, "$~") && !filepath.IsAbs(d):
			p = filepath.Join(home, d)
		}
		switch {
		case p == claudeDir:
			return nil, importRefusal(c.file, c.line, lang, importDirName(d), "~/.claude is writable inside")
		case p != "" && subtree.Of(claudeDir).Contains(p) && mayHoldPrograms(p):
			out = append(out, p+"/")
		}
	}
	return out, nil
}

// importDirName names a directory word for a refusal.
func importDirName(d string) string {
	if d == "." {
		return "the directory it runs in"
	}
	return "the directory " + d
}
