package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/features"
)

// stageAction makes a root holding a copy of action.yml and a stand-in
// binary for each arch, whose contents are its arch.
func stageAction(t *testing.T) string {
	t.Helper()
	staged := t.TempDir()
	copyFile(t, filepath.Join(root, ActionFile), filepath.Join(staged, ActionFile))
	for _, arch := range arches {
		bin := filepath.Join(staged, features.Dir, BinaryName(arch))
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, []byte(arch), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return staged
}

// The pins are written from the binaries and read back as written; the
// release's check passes on those binaries, writes their SHA256SUMS, and
// fails, naming action.yml's line, on any other; and the rest of
// action.yml is left as it was.
func TestPinAndCheck(t *testing.T) {
	staged := stageAction(t)
	sums, err := Sums(staged)
	if err != nil {
		t.Fatal(err)
	}
	// sha256sum of the stand-ins, "amd64" and "arm64".
	want := "5861314d7fccb39c2192173240eab44fa35ca66426201ca2acd0630a6258dd51  claude-sandbox-linux-amd64\n" +
		"f69162950f235e3cdbbad33f1f912d1a504be90d8a37d002c735d6f3e3882265  claude-sandbox-linux-arm64\n"
	if sums != want {
		t.Fatalf("Sums = %q, want %q", sums, want)
	}
	before, _ := os.ReadFile(filepath.Join(staged, ActionFile))
	if err := PinAction(staged, sums); err != nil {
		t.Fatal(err)
	}
	if got, err := PinnedSums(staged); err != nil || got != sums {
		t.Errorf("PinnedSums after PinAction = %q, %v; want %q", got, err, sums)
	}
	after, _ := os.ReadFile(filepath.Join(staged, ActionFile))
	strip := regexp.MustCompile(`(?m)^ +[0-9a-f]{64}  claude-sandbox-linux-.*\n`)
	if strip.ReplaceAllString(string(before), "") != strip.ReplaceAllString(string(after), "") {
		t.Errorf("PinAction changed more of action.yml than the pins:\n%s", after)
	}
	if err := CheckPinned(staged); err != nil {
		t.Fatalf("CheckPinned on the pinned binaries: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(staged, features.Dir, SumsFile)); string(got) != sums {
		t.Errorf("the release's SHA256SUMS is %q, want %q", got, sums)
	}

	os.WriteFile(filepath.Join(staged, features.Dir, BinaryName("arm64")), []byte("another build"), 0o755)
	line := strings.Count(string(after)[:strings.Index(string(after), "SHA256SUMS: |")], "\n") + 2
	err = CheckPinned(staged)
	if err == nil || !strings.HasPrefix(err.Error(), "action.yml:"+strconv.Itoa(line)+": the checksums pinned there are not those of the binaries built here") || strings.Contains(err.Error(), "\n") {
		t.Errorf("CheckPinned on another binary: %v, want one line naming action.yml:%d", err, line)
	}

	os.WriteFile(filepath.Join(staged, ActionFile), []byte("name: claude-sandbox\n"), 0o644)
	for name, err := range map[string]error{"PinAction": PinAction(staged, sums), "CheckPinned": CheckPinned(staged)} {
		if err == nil || err.Error() != "action.yml: the install step has no SHA256SUMS: | block for the release's checksums" {
			t.Errorf("%s on an action.yml without pins: %v", name, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(staged, ActionFile)); string(got) != "name: claude-sandbox\n" {
		t.Errorf("PinAction changed an action.yml without pins: %q", got)
	}
}

// The build gives the same bytes from two checkouts of the tree at two
// paths, one a git repository with a commit and one without git's
// metadata, as the pins are made on one machine and checked on another,
// after the commit that holds them.
func TestBuildIsReproducible(t *testing.T) {
	var builds [][]byte
	for _, commit := range []bool{true, false} {
		tree := t.TempDir()
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			switch {
			case d.Name() == ".git" && !d.IsDir(): // a worktree's link to its repository
				return nil
			case d.Name() == ".git" || rel == filepath.Join(features.Dir, "bin") || rel == "dist":
				return filepath.SkipDir
			case d.IsDir():
				return os.MkdirAll(filepath.Join(tree, rel), 0o755)
			case d.Type().IsRegular():
				copyFile(t, p, filepath.Join(tree, rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if commit {
			git := exec.Command("sh", "-c", "git init -q && git add -A && git -c user.name=t -c user.email=t@example.com commit -q -m tree")
			git.Dir = tree
			if out, err := git.CombinedOutput(); err != nil {
				t.Fatalf("git: %v\n%s", err, out)
			}
		}
		out := filepath.Join(t.TempDir(), "claude-sandbox")
		if err := BuildBinary(tree, "amd64", out); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		builds = append(builds, b)
	}
	if !bytes.Equal(builds[0], builds[1]) {
		t.Errorf("two builds of the same tree differ (%d and %d bytes): the pinned checksums could never match", len(builds[0]), len(builds[1]))
	}
}
