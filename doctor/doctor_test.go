package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProcMasked(t *testing.T) {
	const root = "22 1 0:21 / / rw,relatime - overlay overlay rw\n"
	const proc = "23 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
	for _, tc := range []struct {
		name, mountinfo string
		want            bool
	}{
		{"a plain /proc", root + proc, false},
		{"a host's binfmt_misc", root + proc + "40 23 0:40 / /proc/sys/fs/binfmt_misc rw,relatime - binfmt_misc binfmt_misc rw\n", false},
		{"Docker's masked paths", root + proc + "24 23 0:5 /null /proc/kcore rw,nosuid - devtmpfs udev rw\n", true},
		{"Docker's read-only /proc/sys", root + proc + "25 23 0:22 /sys /proc/sys ro,relatime - proc proc rw\n", true},
		{"/procfoo is not /proc", root + "26 22 0:30 / /procfoo rw - tmpfs tmpfs rw\n", false},
	} {
		if got := ProcMasked(strings.NewReader(tc.mountinfo)); got != tc.want {
			t.Errorf("%s: ProcMasked = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A finding's name, detail and fix are escaped: a refusal quoting a name a
// session chose stays on its line, and no control reaches the terminal.
func TestPrintEscapes(t *testing.T) {
	var b strings.Builder
	Print(&b, []Finding{{Name: "launch\x1b[2A", Detail: "/w/x\x1b]0;title\x07\nok    forged", Fix: "rm /w/\u202eevil\u009b2J"}})
	want := "FAIL  launch\\x1b[2A: /w/x\\x1b]0;title\\x07\\nok    forged\n      fix: rm /w/\\u202eevil\\u009b2J\n"
	if b.String() != want {
		t.Errorf("Print wrote %q, want %q", b.String(), want)
	}
}

func TestMaskedFixNamesTheEngine(t *testing.T) {
	for _, podman := range []bool{false, true} {
		fix := maskedFix(podman)
		if !strings.Contains(fix, "Fix: start the container with `--security-opt systempaths=unconfined`") {
			t.Errorf("podman=%v: the fix does not name systempaths=unconfined: %s", podman, fix)
		}
		if got := strings.Contains(fix, "unmask=ALL") && strings.Contains(fix, "Podman's default masked paths"); got != podman {
			t.Errorf("podman=%v: Podman's words (unmask=ALL) present = %v: %s", podman, got, fix)
		}
	}
}

func TestInPodman(t *testing.T) {
	defer func(old string) { containerEnv = old }(containerEnv)
	containerEnv = filepath.Join(t.TempDir(), ".containerenv")
	if InPodman() {
		t.Error("no .containerenv, yet InPodman")
	}
	if err := os.WriteFile(containerEnv, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !InPodman() {
		t.Error(".containerenv, yet not InPodman")
	}
}
