package testscripts

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// term drives an interactive shell in a real terminal, the way a person
// types at one: a tmux server of the script's own (its socket in $WORK)
// runs bash, with the prompt "$ " and the script's environment, in one
// window of 80 columns and 24 rows.
//
//	term start              start the terminal
//	term send [-l] KEYS...  type: each word a key (Enter, C-z, C-c), or with -l the text itself
//	term wait REGEX         wait until the screen (with what scrolled off) matches; fail after 30 s
//	term prompt             wait until the shell's prompt is the last line: it reads the next command
//	term screen             the screen (with what scrolled off) to stdout
//	term clear              forget the screen and what scrolled off
//	term resize COLS ROWS   give the window a new size
//
// The server ends with the script.
func term(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: term start | send [-l] KEYS... | wait REGEX | prompt | screen | clear | resize COLS ROWS")
	}
	sock := filepath.Join(ts.Getenv("WORK"), "tmux.sock")
	tmux := func(a ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, a...)...).CombinedOutput()
		if err != nil {
			ts.Fatalf("tmux %s: %v\n%s", strings.Join(a, " "), err, out)
		}
		return string(out)
	}
	screen := func() string { return tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t") }
	switch args[0] {
	case "start":
		// The server takes the script's environment: ts.Exec runs it.
		ts.Check(ts.Exec("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "80", "-y", "24",
			"env PS1='$ ' bash --norc --noprofile"))
		ts.Defer(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
		waitScreen(ts, screen, lastLinePrompt)
	case "send":
		tmux(append([]string{"send-keys", "-t", "t"}, args[1:]...)...)
	case "wait":
		if len(args) != 2 {
			ts.Fatalf("usage: term wait REGEX")
		}
		waitScreen(ts, screen, regexp.MustCompile(args[1]))
	case "prompt":
		waitScreen(ts, screen, lastLinePrompt)
	case "clear":
		tmux("send-keys", "-R", "-t", "t")
		tmux("clear-history", "-t", "t")
	case "screen":
		ts.Stdout().Write([]byte(screen()))
	case "resize":
		if len(args) != 3 {
			ts.Fatalf("usage: term resize COLS ROWS")
		}
		tmux("resize-window", "-t", "t", "-x", args[1], "-y", args[2])
	default:
		ts.Fatalf("term: unknown subcommand %q", args[0])
	}
}

// lastLinePrompt matches a screen whose last line ends in the prompt.
var lastLinePrompt = regexp.MustCompile(`\$ \n*$`)

func waitScreen(ts *testscript.TestScript, screen func() string, re *regexp.Regexp) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := screen()
		if re.MatchString(s) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("the screen never matched %q:\n%s", re, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
