package gitconfig

import (
	"path"
	"slices"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/shellcmd"
)

// Kind is what git does with a variable's value.
type Kind int

const (
	Other       Kind = iota
	Command          // git runs it: a program, or a shell command line
	HooksDir         // core.hooksPath: the hooks git runs
	TemplateDir      // init.templateDir: copied, hooks and all, into every new repository
	Include          // include.path, includeIf.<condition>.path: another config file
	Worktree         // core.worktree: where the repository's working tree is
)

// commandKeys are the variables whose value git runs, from git-config(1)
// (Documentation/config/*.adoc in git's source): "*" stands for any
// subsection. Sections whose every key is a command (alias, pager) are in
// commandSections.
var commandKeys = map[string]bool{
	"core.fsmonitor": true, "core.sshcommand": true, "core.pager": true, "core.editor": true,
	"core.askpass": true, "core.gitproxy": true, "core.alternaterefscommand": true,
	"sequence.editor": true, "interactive.difffilter": true,
	"diff.external": true, "diff.*.command": true, "diff.*.textconv": true,
	"difftool.*.cmd": true, "difftool.*.path": true, "mergetool.*.cmd": true, "mergetool.*.path": true,
	"merge.*.driver": true, "filter.*.clean": true, "filter.*.smudge": true, "filter.*.process": true,
	"credential.helper": true, "credential.*.helper": true,
	"gpg.program": true, "gpg.*.program": true, "gpg.*.defaultkeycommand": true,
	"web.browser": true, "browser.*.cmd": true, "browser.*.path": true,
	"man.viewer": true, "man.*.cmd": true, "man.*.path": true, "guitool.*.cmd": true,
	"instaweb.httpd": true, "imap.tunnel": true,
	"sendemail.smtpserver": true, "sendemail.sendmailcmd": true, "sendemail.tocmd": true,
	"sendemail.cccmd": true, "sendemail.headercmd": true,
	"sendemail.*.smtpserver": true, "sendemail.*.sendmailcmd": true, "sendemail.*.tocmd": true,
	"sendemail.*.cccmd": true, "sendemail.*.headercmd": true,
	"remote.*.uploadpack": true, "remote.*.receivepack": true, "uploadpack.packobjectshook": true,
	"submodule.*.update": true, "tar.*.command": true, "hook.*.command": true,
}

// commandSections: every variable of these runs (alias.NAME = !command,
// or git options such as -c core.pager=...; pager.CMD = command).
var commandSections = map[string]bool{"alias": true, "pager": true}

// Kind says what git does with this variable's value.
func (e Entry) Kind() Kind {
	section, sub, key := e.Section(), e.Subsection(), e.Key()
	switch {
	case section == "core" && sub == "" && key == "hookspath":
		return HooksDir
	case section == "core" && sub == "" && key == "worktree":
		return Worktree
	case section == "init" && sub == "" && key == "templatedir":
		return TemplateDir
	case section == "include" && sub == "" && key == "path", section == "includeif" && sub != "" && key == "path":
		return Include
	case commandSections[section]:
		return Command
	}
	pattern := section + "." + key
	if sub != "" {
		pattern = section + ".*." + key
	}
	if commandKeys[pattern] {
		return Command
	}
	return Other
}

// Words returns the words of a command value as a shell reads them
// (shellcmd.Commands): the words of every command it runs, each once. A
// leading "!" (an alias or a submodule update that runs a shell command) is
// dropped, the home ($HOME, ${HOME}, "$HOME") is written ~, and a word
// such as --file=PATH or key=PATH also yields what follows its first "=".
// Any other expansion, a glob's included, is written "$": callers skip
// words that hold one.
func Words(value string) []string {
	seen := map[string]bool{}
	var words []string
	add := func(w string) {
		if rest, ok := strings.CutPrefix(w, "$HOME"); ok && (rest == "" || rest[0] == '/') {
			w = "~" + rest
		}
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	for _, c := range shellcmd.Commands(strings.TrimPrefix(strings.TrimSpace(value), "!"), "HOME") {
		for _, w := range slices.Concat(c.Words, c.Operands) {
			add(w)
			if _, after, ok := strings.Cut(w, "="); ok && after != "" {
				add(after)
			}
		}
	}
	return words
}

// ProgramDirs returns, for each command of a command value whose program
// (or the script its shell or interpreter runs, shellcmd's Programs) the
// shell picks in a directory (a glob or a variable in its last component:
// tools/*.sh, ~/bin/run-$MODE, sh hooks/*.sh), that directory, with its
// trailing "/", spelt as in Words. A directory that is itself computed is
// not returned: which one cannot be known here.
func ProgramDirs(value string) []string {
	var dirs []string
	for _, c := range shellcmd.Commands(strings.TrimPrefix(strings.TrimSpace(value), "!"), "HOME") {
		for _, i := range c.Programs() {
			w := c.Words[i]
			if rest, ok := strings.CutPrefix(w, "$HOME"); ok && (rest == "" || rest[0] == '/') {
				w = "~" + rest
			}
			dir, base := path.Split(w)
			if dir != "" && strings.Contains(base, "$") && !strings.Contains(dir, "$") && !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
	}
	return dirs
}

// Scripts returns the scripts that the commands of a command value run by
// a shell or an interpreter (shellcmd's Programs past the program: sh
// x.sh, python3 lint.py, . env.sh; and its Scripts: sh < x.sh, cat x.sh |
// sh, eval "$(cat x.sh)"), spelt as in Words, each once. A
// script named without a directory is read from the working directory as
// ./x.sh is, and is returned so ("./x.sh"). A script the shell computes is
// not returned.
func Scripts(value string) []string {
	var scripts []string
	for _, c := range shellcmd.Commands(strings.TrimPrefix(strings.TrimSpace(value), "!"), "HOME") {
		programs := c.Programs()
		words := c.Scripts
		for _, i := range programs[min(1, len(programs)):] {
			words = append(words, c.Words[i])
		}
		for _, w := range words {
			if rest, ok := strings.CutPrefix(w, "$HOME"); ok && (rest == "" || rest[0] == '/') {
				w = "~" + rest
			}
			if !strings.ContainsAny(w, "/~") {
				w = "./" + w
			}
			if w != "./-" && !strings.Contains(w, "$") && !slices.Contains(scripts, w) {
				scripts = append(scripts, w)
			}
		}
	}
	return scripts
}

// ImportDirs returns, for each command of a command value that runs
// Python, Perl or Ruby, the directories it loads modules from before its
// own library (shellcmd's ImportDirs: "." for the working directory, a
// Python script's directory, -I's, PYTHONPATH's and the like), spelt as in
// Words, each once, and the language of the first.
func ImportDirs(value string) (lang string, dirs []string) {
	for _, c := range shellcmd.Commands(strings.TrimPrefix(strings.TrimSpace(value), "!"), "HOME") {
		l, ds := c.ImportDirs()
		if lang == "" {
			lang = l
		}
		for _, d := range ds {
			if rest, ok := strings.CutPrefix(d, "$HOME"); ok && (rest == "" || rest[0] == '/') {
				d = "~" + rest
			}
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return lang, dirs
}
