package features

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// install.sh runs under whatever /bin/sh the base image has (dash, busybox
// ash), so it must be POSIX sh: shellcheck checks it as such, and dash parses
// it. The repository's own ./install and .ci/run are checked alongside.
func TestScriptsArePortable(t *testing.T) {
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("shellcheck is missing; .ci/run installs it")
		}
		t.Skip("!!! SKIPPING: shellcheck is not installed")
	}
	for _, tc := range []struct{ path, shell string }{
		{filepath.Join(root, Dir, "install.sh"), "sh"},
		{filepath.Join(root, "install"), "sh"},
		{filepath.Join(root, ".ci", "run"), "bash"},
	} {
		if out, err := exec.Command(shellcheck, "-s", tc.shell, tc.path).CombinedOutput(); err != nil {
			t.Errorf("shellcheck -s %s %s: %v\n%s", tc.shell, tc.path, err, out)
		}
	}
	if dash, err := exec.LookPath("dash"); err == nil {
		if out, err := exec.Command(dash, "-n", filepath.Join(root, Dir, "install.sh")).CombinedOutput(); err != nil {
			t.Errorf("dash -n install.sh: %v\n%s", err, out)
		}
	}
}
