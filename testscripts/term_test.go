package testscripts

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
//	term wait REGEX         wait until the screen (with what scrolled off) matches; fail after 60 s
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
	waitScreen := func(re *regexp.Regexp) {
		if s, ok := waitFor(screen, re); !ok {
			pid, _ := strconv.Atoi(strings.TrimSpace(tmux("display-message", "-p", "-t", "t", "#{pane_pid}")))
			ts.Fatalf("the screen never matched %q:\n%s\nwhat runs in the terminal:\n%s", re, s, processTree(pid))
		}
	}
	switch args[0] {
	case "start":
		// The server takes the script's environment: ts.Exec runs it.
		ts.Check(ts.Exec("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "80", "-y", "24",
			"env PS1='$ ' bash --norc --noprofile"))
		ts.Defer(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
		waitScreen(lastLinePrompt)
	case "send":
		tmux(append([]string{"send-keys", "-t", "t"}, args[1:]...)...)
	case "wait":
		if len(args) != 2 {
			ts.Fatalf("usage: term wait REGEX")
		}
		waitScreen(regexp.MustCompile(args[1]))
	case "prompt":
		waitScreen(lastLinePrompt)
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

// waitFor waits until the screen matches, 60 s at most (the real Claude
// Code starting beside other live tests on two loaded CPUs has taken more
// than 30), and returns the screen it saw last.
func waitFor(screen func() string, re *regexp.Regexp) (string, bool) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := screen()
		if re.MatchString(s) {
			return s, true
		}
		if time.Now().After(deadline) {
			return s, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processTree describes pid and every process below it, a line per thread:
// its state, what it waits in (wchan) and, where /proc lets the test read
// it (root), its kernel stack. It is what a session that never answers
// is diagnosed from.
func processTree(pid int) string {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		p, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if len(fields) > 1 {
			parent, _ := strconv.Atoi(fields[1])
			children[parent] = append(children[parent], p)
		}
	}
	var b strings.Builder
	var describe func(pid, depth int)
	describe = func(pid, depth int) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		fmt.Fprintf(&b, "%s%d %s\n", strings.Repeat("  ", depth), pid, strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "))
		// Threads alike (a Go program's idle ones) are told once, counted.
		var kinds []string
		count := map[string]int{}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/[0-9]*", pid))
		for _, t := range tasks {
			stat, _ := os.ReadFile(t + "/stat")
			state := ""
			if i := bytes.LastIndexByte(stat, ')'); i >= 0 && len(stat) > i+2 {
				state = string(stat[i+2 : i+3])
			}
			wchan, _ := os.ReadFile(t + "/wchan")
			kind := fmt.Sprintf("%s %s", state, wchan)
			if stack, err := os.ReadFile(t + "/stack"); err == nil {
				lines := strings.Split(strings.TrimSpace(string(stack)), "\n")
				kind += " <- " + strings.Join(lines[:min(5, len(lines))], " <- ")
			}
			if count[kind] == 0 {
				kinds = append(kinds, kind)
			}
			count[kind]++
		}
		for _, k := range kinds {
			fmt.Fprintf(&b, "%s  %d thread(s) %s\n", strings.Repeat("  ", depth), count[k], k)
		}
		for _, c := range children[pid] {
			describe(c, depth+1)
		}
	}
	describe(pid, 0)
	return b.String()
}
