package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"golang.org/x/sys/unix"
)

var sample = []Result{
	{ID: "capabilities", OK: true, Detail: "CapEff, CapPrm, CapInh and CapAmb are zero"},
	{ID: "seccomp-filter", Detail: "seccomp mode is 0, not 2 (filter): no syscall filter is installed"},
	{ID: "home-tmpfs", OK: true, Detail: "/home/u is the sandbox's own tmpfs"},
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	writeTable(&b, sample)
	want := `check           result  detail
capabilities    ok      CapEff, CapPrm, CapInh and CapAmb are zero
seccomp-filter  FAIL    seccomp mode is 0, not 2 (filter): no syscall filter is installed
home-tmpfs      ok      /home/u is the sandbox's own tmpfs
3 checks, 1 failed
`
	if b.String() != want {
		t.Errorf("writeTable:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	writeJSON(&b, sample)
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("the JSON does not parse: %v\n%s", err, b.String())
	}
	if len(got) != 3 || got[1]["id"] != "seccomp-filter" || got[1]["ok"] != false || got[0]["ok"] != true {
		t.Errorf("writeJSON = %v", got)
	}
	for _, r := range got {
		if len(r) != 3 {
			t.Errorf("a result has fields %v, want id, ok and detail", r)
		}
	}
}

// A detail that spans lines, or names a path a session chose, stays on
// its row, escaped; the JSON holds it as the check said it.
func TestDetailsStayOnTheirRow(t *testing.T) {
	saved := checks
	defer func() { checks = saved }()
	checks = []check{
		{"holds", func(*facts) (string, error) { return "a\nb\tc", nil }},
		{"fails", func(*facts) (string, error) { return "", errors.New("/w/x\x1b]0;title\x07\u202e") }},
	}
	got := runAll(&facts{})
	want := []Result{{ID: "holds", OK: true, Detail: "a\nb\tc"}, {ID: "fails", Detail: "/w/x\x1b]0;title\x07\u202e"}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("runAll = %+v, want %+v", got, want)
	}
	var b bytes.Buffer
	writeTable(&b, got)
	wantTable := `check  result  detail
holds  ok      a\nb\tc
fails  FAIL    /w/x\x1b]0;title\x07\u202e
2 checks, 1 failed
`
	if b.String() != wantTable {
		t.Errorf("writeTable:\n%s\nwant:\n%s", b.String(), wantTable)
	}
	b.Reset()
	writeJSON(&b, got)
	var back []Result
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back) != 2 || back[0] != want[0] || back[1] != want[1] {
		t.Errorf("writeJSON reads back as %+v (%v), want %+v", back, err, want)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07\u202e") {
		t.Errorf("writeJSON = %s, holds a character a terminal acts on", b.String())
	}
}

// Ids are kebab-case, unique, at least 25, and each is explained in docs/verify.md.
func TestCheckIDs(t *testing.T) {
	doc, err := os.ReadFile("../docs/verify.md")
	if err != nil {
		t.Fatal(err)
	}
	kebab := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, c := range checks {
		if !kebab.MatchString(c.id) || seen[c.id] {
			t.Errorf("check id %q is not kebab-case or is repeated", c.id)
		}
		seen[c.id] = true
		if !strings.Contains(string(doc), "| `"+c.id+"` |") {
			t.Errorf("docs/verify.md has no row for %s", c.id)
		}
	}
	if len(checks) < 25 {
		t.Errorf("%d checks, want at least 25", len(checks))
	}
}

func TestRunOutside(t *testing.T) {
	if _, err := os.Lstat(layout.InsideMarker); err == nil {
		t.Skip("the tests run inside a sandbox")
	}
	var stdout, stderr bytes.Buffer
	if got := Run(layout.Installed(), true, nil, &stdout, &stderr); got != host.ExitRefused {
		t.Errorf("Run outside = %d, want %d", got, host.ExitRefused)
	}
	if stdout.Len() > 0 || !strings.HasPrefix(stderr.String(), "claude-sandbox verify: not inside the sandbox: ") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("Run outside printed stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

func TestStatusIsCapped(t *testing.T) {
	if got := exitStatus(sample); got != 1 {
		t.Errorf("status for 1 failure = %d, want 1", got)
	}
	if got := exitStatus(make([]Result, 300)); got != 124 {
		t.Errorf("status for 300 failures = %d, want 124", got)
	}
}

func TestRefusedWith(t *testing.T) {
	calls := []string{"a", "b", "c", "d", "e", "f", "g"}
	same := []error{unix.EAFNOSUPPORT, unix.EAFNOSUPPORT, unix.EAFNOSUPPORT, unix.EAFNOSUPPORT, unix.EAFNOSUPPORT, unix.EAFNOSUPPORT, unix.EAFNOSUPPORT}
	if err := refusedWith(unix.EAFNOSUPPORT, calls, same); err != nil {
		t.Errorf("every call refused: %v", err)
	}
	mixed := []error{unix.EAFNOSUPPORT, nil, unix.EINVAL, unix.EPERM, unix.EINVAL, unix.EINVAL, unix.EAFNOSUPPORT}
	err := refusedWith(unix.EAFNOSUPPORT, calls, mixed)
	want := "5 of 7 calls reached the kernel, not the filter's EAFNOSUPPORT: b succeeded, c: invalid argument, d: operation not permitted, e: invalid argument and 1 more (invalid argument is the kernel's answer to the probe's flag bit)"
	if err == nil || err.Error() != want {
		t.Errorf("refusedWith = %v, want %s", err, want)
	}
}
