package gitconfig

import "strings"

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

// Words splits a command value into the words a shell would see, best
// effort: quotes and backslashes as sh reads them, and the shell's
// operators (; & | ( ) < > `) as separators. A leading "!" (an alias or a
// submodule update that runs a shell command) is dropped, and a word such
// as --file=PATH or key=PATH also yields what follows its first "=". It
// does not expand variables, globs or command substitutions: callers skip
// words that hold "$", "*" or "?".
func Words(value string) []string {
	value = strings.TrimPrefix(strings.TrimSpace(value), "!")
	var words []string
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, w.String())
			if _, after, ok := strings.Cut(w.String(), "="); ok && after != "" {
				words = append(words, after)
			}
		}
		w.Reset()
		inWord = false
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case c == '\'':
			inWord = true
			j := strings.IndexByte(value[i+1:], '\'')
			if j < 0 {
				j = len(value) - i - 1
			}
			w.WriteString(value[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(value) && value[i] != '"'; i++ {
				if value[i] == '\\' && i+1 < len(value) && strings.IndexByte("\"\\$`", value[i+1]) >= 0 {
					i++
				}
				w.WriteByte(value[i])
			}
		case c == '\\' && i+1 < len(value):
			inWord = true
			i++
			w.WriteByte(value[i])
		case c == ' ' || c == '\t' || c == '\n' || strings.IndexByte(";&|()<>`", c) >= 0:
			end()
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	end()
	return words
}
