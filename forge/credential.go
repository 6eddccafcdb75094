package forge

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
)

// Credential is what the launcher adds to a forge's requests: the user's,
// found outside. Password is the secret (a token); it never enters the
// sandbox.
type Credential struct {
	Username, Password string
	// Source says where it came from, for doctor and the launch's messages.
	Source string
}

// MinPasswordLen is the shortest secret the launcher uses: every answer is
// masked for it, and a short one would mask ordinary text.
const MinPasswordLen = 8

// FillTimeout bounds `git credential fill`: a helper that waits on
// something (a locked keyring) must not hold the launch.
const FillTimeout = 15 * time.Second

// Find finds the credential of the forge at host (HOST or HOST:PORT)
// outside, as git outside would: in a GitHub Actions job, the job's token
// for the job's forge; else `git credential fill` as the user, with the
// launching environment, in / (no repository the sandbox writes is read).
func Find(ctx context.Context, env launchenv.Env, host string) (*Credential, error) {
	if token, ok := actionToken(env, host); ok {
		return FromToken(token, "GITHUB_TOKEN of the GitHub Actions job", host)
	}
	vars := env.Vars()
	list := make([]string, len(vars))
	for i, v := range vars {
		list[i] = v.Name + "=" + v.Value
	}
	return Fill(ctx, "git", list, "/", host)
}

// WithoutActionToken is args with the GitHub Actions job's token, where the
// job's forge is among forges and its token is one the launcher uses,
// replaced by placeholder: claude-code-action hands Claude the token in
// its arguments (its MCP servers' configuration), and the forge's proxy
// adds it outside instead (ADR 0042). Other arguments are args as given.
func WithoutActionToken(args []string, env launchenv.Env, forges []string, placeholder string) []string {
	for _, host := range forges {
		token, ok := actionToken(env, host)
		if !ok {
			continue
		}
		if _, err := FromToken(token, "", host); err != nil {
			return args // not a token the launcher adds
		}
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = strings.ReplaceAll(a, token, placeholder)
		}
		return out
	}
	return args
}

// actionToken is the GitHub Actions job's token, for the forge the job
// runs on: the runner holds it in the launching environment, which never
// enters the sandbox.
func actionToken(env launchenv.Env, host string) (string, bool) {
	if env.Get("GITHUB_ACTIONS") != "true" {
		return "", false
	}
	server := "github.com"
	if u, err := url.Parse(env.Get("GITHUB_SERVER_URL")); err == nil && u.Host != "" {
		server = u.Host
	}
	token := env.Get("GITHUB_TOKEN")
	return token, token != "" && host == server
}

// Fill asks git outside for the credential of https://host, as git outside
// would find it: `git credential fill`, run as the user with the user's
// configuration and environment (env), in dir (where no repository the
// sandbox writes is found), never prompting.
func Fill(ctx context.Context, git string, env []string, dir, host string) (*Credential, error) {
	ctx, cancel := context.WithTimeout(ctx, FillTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, git, "credential", "fill")
	// At the bound, git and every helper it started die: a helper left
	// running would hold git's output open, and the launch with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	cmd.Dir = dir
	// No terminal prompt and no askpass program: a launch answers nothing.
	cmd.Env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	cmd.Stdin = strings.NewReader("protocol=https\nhost=" + host + "\n\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("git credential fill gave no answer for %s within %s", host, FillTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("git credential fill found no credential for %s (%s)", host, lastLine(errOut.String(), err))
	}
	c := &Credential{Source: "git credential fill"}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "username="); ok {
			c.Username = v
		} else if v, ok := strings.CutPrefix(sc.Text(), "password="); ok {
			c.Password = v
		}
	}
	return c, c.check(host)
}

// check refuses a credential the launcher cannot keep out: an empty or
// short secret, or one that a header cannot carry.
func (c *Credential) check(host string) error {
	switch {
	case c.Password == "":
		return fmt.Errorf("%s gave no password for %s", c.Source, host)
	case len(c.Password) < MinPasswordLen:
		return fmt.Errorf("%s gave a password of %d bytes for %s; the launcher masks it in every answer and uses one of at least %d", c.Source, len(c.Password), host, MinPasswordLen)
	case strings.ContainsAny(c.Password+c.Username, "\r\n\x00"):
		return fmt.Errorf("%s gave a credential for %s with a line break in it", c.Source, host)
	}
	return nil
}

// FromToken is a token the launcher holds already (the GitHub Action's
// job token), as git sends it: the user x-access-token.
func FromToken(token, source, host string) (*Credential, error) {
	c := &Credential{Username: "x-access-token", Password: token, Source: source}
	return c, c.check(host)
}

// lastLine is the last line git wrote on stderr, or the error itself.
func lastLine(stderr string, err error) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return "git: " + l
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Sprintf("git exited with %d", ee.ExitCode())
	}
	return err.Error()
}
