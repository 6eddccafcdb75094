package templates

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The install script runs under whatever /bin/sh the image has: shellcheck
// checks the rendered script as POSIX sh.
func TestInstallScriptIsPortable(t *testing.T) {
	script, err := InstallScript("0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "\nrelease="+ReleaseURL+"0.1.0\n") {
		t.Errorf("the script does not download from the 0.1.0 release:\n%s", script)
	}
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("shellcheck is missing; .ci/run installs it")
		}
		t.Skip("!!! SKIPPING: shellcheck is not installed")
	}
	path := filepath.Join(t.TempDir(), "claude-sandbox-install.sh")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(shellcheck, "-s", "sh", path).CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}
