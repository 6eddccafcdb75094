package testscripts

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// startClaude starts Claude Code as the user who owns HOME, in the
// workspace WS, the way the scripts about Claude Code outside the sandbox
// need it (ADR 0017):
//
//	start-claude ide|terminal|shared-home HOME WS [CLAUDE [ARG...]]
//
// CLAUDE is the binary, by default the real one started directly, outside
// the sandbox; `claude` (the launcher) starts it inside; ARGs go to it.
// $START_CLAUDE_ENV (NAME=VALUE words) is put in the environment of ide
// and terminal: the user's own, such as a cloud provider's (the last
// value of a name wins). ide is an IDE extension's bundled binary:
// stream-json on stdin with one prompt, $START_CLAUDE_PROMPT or "hi".
// terminal is an interactive session
// on a terminal for 5 seconds (long enough for its status line; with
// $START_CLAUDE_UNTIL, until that file exists, 15 seconds at most), which
// prints "the status line says NOT SANDBOXED" when the screen did; HOME's
// ~/.claude.json must have the first-run questions answered. shared-home is
// that terminal in another container that shares ~/.claude but has no
// claude-sandbox: /etc/claude-code hidden, and a home of its own whose
// ~/.claude is HOME's. Claude Code talks to no API (a closed loopback port,
// no retries) unless $START_CLAUDE_ENV names one; what matters is what it
// runs before and around the first prompt. The exit status is 0 whatever
// Claude Code did.
func startClaude(args []string) int {
	if len(args) < 3 || (args[0] != "ide" && args[0] != "terminal" && args[0] != "shared-home") {
		fmt.Fprintln(os.Stderr, "usage: start-claude ide|terminal|shared-home HOME WS [CLAUDE [ARG...]]")
		return 2
	}
	mode, home, ws := args[0], args[1], args[2]
	claude := "/usr/libexec/claude-sandbox/claude"
	var extra []string
	if len(args) > 3 {
		claude, extra = args[3], args[4:]
	}
	prompt := "hi"
	if p := os.Getenv("START_CLAUDE_PROMPT"); p != "" {
		prompt = p
	}
	fi, err := os.Stat(home)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start-claude:", err)
		return 1
	}
	st := fi.Sys().(*syscall.Stat_t)
	user, err := userName(st.Uid)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start-claude:", err)
		return 1
	}
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "USER=" + user, "LOGNAME=" + user, "TERM=xterm",
		"ANTHROPIC_API_KEY=sk-standin", "ANTHROPIC_BASE_URL=http://127.0.0.1:9", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=0", "DISABLE_AUTOUPDATER=1"}
	if mode != "shared-home" {
		env = append(env, strings.Fields(os.Getenv("START_CLAUDE_ENV"))...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	asUser := &syscall.Credential{Uid: st.Uid, Gid: st.Gid}
	switch mode {
	case "ide":
		cmd := exec.CommandContext(ctx, claude, append([]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}, extra...)...)
		cmd.Dir, cmd.Env = ws, append(env, "HOME="+home)
		msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}})
		cmd.Stdin = strings.NewReader(string(msg) + "\n")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: asUser}
		_ = cmd.Run()
		return 0
	case "terminal":
		cmd := exec.CommandContext(ctx, claude, extra...)
		cmd.Dir, cmd.Env = ws, append(env, "HOME="+home)
		err = onTerminal(cmd, asUser, os.Getenv("START_CLAUDE_UNTIL"))
	default:
		own, err := sharedHome(home, ws, st.Uid, st.Gid)
		if err != nil {
			fmt.Fprintln(os.Stderr, "start-claude:", err)
			return 1
		}
		defer os.RemoveAll(own)
		script := `mount -t tmpfs tmpfs /etc/claude-code && exec setpriv --reuid="$1" --regid="$2" --clear-groups -- "$3"`
		cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh", fmt.Sprint(st.Uid), fmt.Sprint(st.Gid), claude)
		if len(extra) > 0 {
			fmt.Fprintln(os.Stderr, "start-claude: shared-home takes no arguments for Claude Code")
			return 2
		}
		cmd.Dir, cmd.Env = ws, append(env, "HOME="+own)
		err = onTerminal(cmd, nil, "")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "start-claude:", err)
		return 1
	}
	return 0
}

// sharedHome makes a home whose ~/.claude is HOME's, with a ~/.claude.json
// that has the first-run questions answered and WS trusted, so that an
// interactive session goes straight to its prompt.
func sharedHome(home, ws string, uid, gid uint32) (string, error) {
	dir, err := os.MkdirTemp("", "claude-sandbox-shared-home-")
	if err != nil {
		return "", err
	}
	config, _ := json.Marshal(map[string]any{"hasCompletedOnboarding": true, "theme": "dark",
		"customApiKeyResponses": map[string]any{"approved": []string{"sk-standin"}, "rejected": []string{}},
		"projects":              map[string]any{ws: map[string]any{"hasTrustDialogAccepted": true}}})
	for _, err := range []error{
		os.Symlink(filepath.Join(home, ".claude"), filepath.Join(dir, ".claude")),
		os.WriteFile(filepath.Join(dir, ".claude.json"), config, 0o600),
		os.Lchown(filepath.Join(dir, ".claude"), int(uid), int(gid)),
		os.Chown(filepath.Join(dir, ".claude.json"), int(uid), int(gid)),
		os.Chown(dir, int(uid), int(gid)),
	} {
		if err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// onTerminal runs cmd (as cred, when given) as the session leader of a
// new terminal for 5 seconds, or until the file until exists (15 seconds
// at most) when until is not empty, answering the terminal queries Claude
// Code asks, then ends it. It says so on stdout when the screen showed the
// product's status line for a session outside the sandbox.
func onTerminal(cmd *exec.Cmd, cred *syscall.Credential, until string) error {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	defer master.Close()
	var unlock int32
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, master.Fd(), unix.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		return errno
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		return err
	}
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return err
	}
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
		slave.Close()
		return err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Credential: cred}
	if cred != nil {
		if err := slave.Chown(int(cred.Uid), -1); err != nil {
			slave.Close()
			return err
		}
	}
	err = cmd.Start()
	slave.Close()
	if err != nil {
		return err
	}
	warned := make(chan bool, 1)
	go func() {
		r := bufio.NewReader(master)
		buf := make([]byte, 4096)
		seen := false
		defer func() { warned <- seen }()
		for {
			k, err := r.Read(buf)
			if err != nil {
				return
			}
			seen = seen || strings.Contains(string(buf[:k]), "NOT SANDBOXED")
			if strings.Contains(string(buf[:k]), "\x1b[c") {
				master.WriteString("\x1b[?62;c") // a VT220's answer to "who are you"
			}
		}
	}()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	d := 5 * time.Second
	if until != "" {
		d = 15 * time.Second
	}
	deadline := time.After(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for ended := false; !ended; {
		select {
		case <-done:
			ended = true
		case <-tick.C:
			if _, err := os.Stat(until); until == "" || err != nil {
				continue
			}
			ended = true
		case <-deadline:
			ended = true
		}
	}
	select {
	case <-done:
	default:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	master.Close()
	if <-warned {
		fmt.Println("the status line says NOT SANDBOXED")
	}
	return nil
}

// userName is uid's name in /etc/passwd.
func userName(uid uint32) (string, error) {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) > 2 && fields[2] == fmt.Sprint(uid) {
			return fields[0], nil
		}
	}
	return "", fmt.Errorf("uid %d is not in /etc/passwd", uid)
}
