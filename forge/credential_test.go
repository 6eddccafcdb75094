package forge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
)

// helperEnv is a launching environment whose git configuration names a
// credential helper that prints answer.
func helperEnv(t *testing.T, answer string) launchenv.Env {
	home := t.TempDir()
	helper := filepath.Join(home, "helper")
	if err := os.WriteFile(helper, []byte("#!/bin/sh\ntest \"$1\" = get || exit 0\nprintf '%s' '"+answer+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[credential]\n\thelper = "+helper+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return launchenv.Read([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"})
}

// TestFind: the user's helper answers through git credential fill; the
// Action's job token serves the job's forge only; a short password, an
// empty one and no helper are errors that name the host and never the
// secret.
func TestFind(t *testing.T) {
	c, err := Find(context.Background(), helperEnv(t, "username=tester\npassword="+testToken+"\n"), "forge.example")
	if err != nil || c.Username != "tester" || c.Password != testToken || c.Source != "git credential fill" {
		t.Errorf("Find = %+v, %v", c, err)
	}
	for answer, want := range map[string]string{
		"username=tester\npassword=short\n": "a password of 5 bytes for forge.example",
		"username=tester\n":                 "found no credential for forge.example",
	} {
		_, err := Find(context.Background(), helperEnv(t, answer), "forge.example")
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "short") {
			t.Errorf("answer %q: %v", answer, err)
		}
	}
	none := launchenv.Read([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"})
	if _, err := Find(context.Background(), none, "forge.example"); err == nil || !strings.Contains(err.Error(), "git credential fill found no credential for forge.example") {
		t.Errorf("no helper: %v", err)
	}
	action := launchenv.Read([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1",
		"GITHUB_ACTIONS=true", "GITHUB_TOKEN=" + testToken, "GITHUB_SERVER_URL=https://github.com"})
	c, err = Find(context.Background(), action, "github.com")
	if err != nil || c.Password != testToken || c.Username != "x-access-token" || !strings.Contains(c.Source, "GitHub Actions") {
		t.Errorf("the Action's token: %+v, %v", c, err)
	}
	if c, err := Find(context.Background(), action, "gitlab.com"); err == nil {
		t.Errorf("the Action's token went to another forge: %+v", c)
	}
}

// TestWithoutActionToken: the job's token in Claude's arguments (inside the
// MCP configuration claude-code-action passes) becomes the placeholder when
// the job's forge is among the forges, and only then; a token the launcher
// would not add (too short) is left, as it is then not the forge's to add.
func TestWithoutActionToken(t *testing.T) {
	action := func(token string) launchenv.Env {
		return launchenv.Read([]string{"GITHUB_ACTIONS=true", "GITHUB_TOKEN=" + token, "GITHUB_SERVER_URL=https://github.com"})
	}
	args := []string{"-p", "fix it", "--mcp-config", `{"mcpServers":{"github":{"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"` + testToken + `"}}}}`}
	got := WithoutActionToken(args, action(testToken), []string{"gitlab.com", "github.com"}, "PLACEHOLDER")
	if strings.Contains(strings.Join(got, " "), testToken) || !strings.Contains(got[3], `"GITHUB_PERSONAL_ACCESS_TOKEN":"PLACEHOLDER"`) || got[1] != "fix it" {
		t.Errorf("with the job's forge named: %q", got)
	}
	if args[3] == got[3] {
		t.Error("the caller's arguments were changed in place, or not at all")
	}
	for name, c := range map[string]struct {
		env    launchenv.Env
		forges []string
	}{
		"the job's forge not named": {action(testToken), []string{"gitlab.com"}},
		"not in an Action":          {launchenv.Read([]string{"GITHUB_TOKEN=" + testToken}), []string{"github.com"}},
		"a token too short":         {action("short"), []string{"github.com"}},
	} {
		in := args
		if name == "a token too short" {
			in = []string{strings.ReplaceAll(args[3], testToken, "short")}
		}
		if got := WithoutActionToken(in, c.env, c.forges, "PLACEHOLDER"); strings.Join(got, " ") != strings.Join(in, " ") {
			t.Errorf("%s: %q", name, got)
		}
	}
}

// TestFillBounded: a helper that never answers holds neither the launch nor
// a process: at the bound git and the helper are killed, and Fill says so.
// (The test's own deadline stands for FillTimeout.)
func TestFillBounded(t *testing.T) {
	home := t.TempDir()
	helper, pidFile := filepath.Join(home, "helper"), filepath.Join(home, "helper.pid")
	if err := os.WriteFile(helper, []byte("#!/bin/sh\necho $$ > "+pidFile+"\nexec sleep 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[credential]\n\thelper = "+helper+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := Fill(ctx, "git", []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}, "/", "forge.example")
	if err == nil || !strings.Contains(err.Error(), "git credential fill gave no answer for forge.example within") {
		t.Errorf("Fill of a helper that never answers: %v", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	// Reaped or a zombie of git's, which died with it: either is no longer
	// running.
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(st), ") Z ") {
		t.Errorf("the helper (pid %d) still runs after Fill returned: %s", pid, st)
	}
}
