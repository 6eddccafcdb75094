package forge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
