package egress

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/forgepush"
)

func TestLogCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache", "claude-sandbox")
	l := &Log{Path: filepath.Join(dir, "denials.log")}
	l.Record("a.test", 443, "not in the allowlist")
	for p, want := range map[string]os.FileMode{dir: 0o700, l.Path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

func TestLogRotation(t *testing.T) {
	old := MaxLogSize
	MaxLogSize = 300
	t.Cleanup(func() { MaxLogSize = old })
	l := &Log{Path: filepath.Join(t.TempDir(), "denials.log")}
	for i := range 10 {
		l.Record(fmt.Sprintf("h%d.test", i), 443, "not in the allowlist")
	}
	for _, p := range []string{l.Path, l.Path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > MaxLogSize+200 {
			t.Errorf("%s grew to %d bytes past the limit of %d", p, fi.Size(), MaxLogSize)
		}
	}
	ds, err := Recent(l.Path, 100)
	if err != nil {
		t.Fatal(err)
	}
	// What is left is an unbroken run of the latest, split over both files.
	if len(ds) < 4 || len(ds) >= 10 {
		t.Fatalf("kept %d denials, want the latest few of 10", len(ds))
	}
	for i, d := range ds {
		if want := fmt.Sprintf("h%d.test", 10-len(ds)+i); d.Host != want {
			t.Errorf("denial %d is %s, want %s", i, d.Host, want)
		}
	}
}

func TestRecent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "denials.log")
	if ds, err := Recent(path, 5); err != nil || len(ds) != 0 {
		t.Fatalf("Recent without files = %v, %v; want none", ds, err)
	}
	line := func(host string) string {
		return `{"Time":"2025-03-04T05:06:07Z","Host":"` + host + `","Port":443,"Reason":"not in the allowlist","Workspace":"/w"}` + "\n"
	}
	os.WriteFile(path+".1", []byte(line("a.test")+"not json\n"+line("b.test")), 0o600)
	os.WriteFile(path, []byte(line("c.test")+"{}\n"+line("d.test")+`{"Host":"trunc`), 0o600)
	hosts := func(n int) string {
		ds, err := Recent(path, n)
		if err != nil {
			t.Fatal(err)
		}
		var hs []string
		for _, d := range ds {
			hs = append(hs, d.Host)
		}
		return strings.Join(hs, " ")
	}
	for n, want := range map[int]string{10: "a.test b.test c.test d.test", 3: "b.test c.test d.test", 1: "d.test", 0: ""} {
		if got := hosts(n); got != want {
			t.Errorf("Recent(n=%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLogReportsFailureOnce(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o600)
	var errs bytes.Buffer
	l := &Log{Path: filepath.Join(blocker, "denials.log"), Errors: &errs}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { l.Record("a.test", 443, "not in the allowlist") })
	}
	wg.Wait()
	if n := strings.Count(errs.String(), "\n"); n != 1 || !strings.Contains(errs.String(), "cannot record") {
		t.Errorf("reported %d times: %q; want once", n, errs.String())
	}
}

func TestWriteDenials(t *testing.T) {
	old := time.Local
	time.Local = time.FixedZone("test", 2*60*60)
	t.Cleanup(func() { time.Local = old })
	var b strings.Builder
	WriteDenials(&b, []Denial{
		{Time: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC), Host: "example.com", Port: 443, Reason: "not in the allowlist", Workspace: "/work/proj"},
		{Time: time.Date(2025, 3, 4, 5, 6, 8, 0, time.UTC), Host: "::1", Port: 80, Reason: "IP address not in allow-ip", Workspace: "/work/proj"},
		{Time: time.Date(2025, 3, 4, 5, 6, 9, 0, time.UTC), Path: "/work/proj/sub/.git", Reason: "git would obey it", Workspace: "/work/proj"},
		{Time: time.Date(2025, 3, 4, 5, 6, 10, 0, time.UTC), Repo: "https://github.com/o/r", Ref: "refs/heads/main", Reason: "the repository's default branch is not in push-ref", Workspace: "/work/proj"},
		{Time: time.Date(2025, 3, 4, 5, 6, 11, 0, time.UTC), Repo: "https://github.com/o/r", Reason: "malformed push: signed pushes", Workspace: "/work/proj"},
		{Time: time.Date(2025, 3, 4, 5, 6, 12, 0, time.UTC), Host: "api.github.com:443", Request: "PUT /repos/o/r/pulls/1/merge", Reason: "not in forge-api", Workspace: "/work/proj"},
	})
	want := "" +
		"TIME                 REFUSED                                              REASON                                              WORKSPACE\n" +
		"2025-03-04 07:06:07  example.com:443                                      not in the allowlist                                /work/proj\n" +
		"2025-03-04 07:06:08  [::1]:80                                             IP address not in allow-ip                          /work/proj\n" +
		"2025-03-04 07:06:09  /work/proj/sub/.git                                  git would obey it                                   /work/proj\n" +
		"2025-03-04 07:06:10  push https://github.com/o/r refs/heads/main          the repository's default branch is not in push-ref  /work/proj\n" +
		"2025-03-04 07:06:11  push https://github.com/o/r                          malformed push: signed pushes                       /work/proj\n" +
		"2025-03-04 07:06:12  api api.github.com:443 PUT /repos/o/r/pulls/1/merge  not in forge-api                                    /work/proj\n"
	if b.String() != want {
		t.Errorf("WriteDenials wrote\n%s\nwant\n%s", b.String(), want)
	}
}

// What the sandbox chose (a host, a path, a reason quoting one, a
// workspace) is escaped in the table: each refusal stays one row, and no
// control reaches the terminal.
func TestWriteDenialsEscapes(t *testing.T) {
	var b strings.Builder
	WriteDenials(&b, []Denial{
		{Time: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC), Host: "x\u202egnp.exe\u009b2J.test", Port: 443, Reason: "not in the allowlist\x1b[2K", Workspace: "/w/\x1b]0;title\x07"},
		{Time: time.Date(2025, 3, 4, 5, 6, 8, 0, time.UTC), Path: "/w/a\nclaude-sandbox: forged/.git", Reason: "git would obey it", Workspace: "/w"},
	})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 || strings.ContainsAny(b.String(), "\x1b\x07\u202e\u009b") {
		t.Fatalf("WriteDenials wrote %q: a row split or a control left raw", b.String())
	}
	for i, want := range []string{`x\u202egnp.exe\u009b2J.test:443`, `not in the allowlist\x1b[2K`, `/w/\x1b]0;title\x07`} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row %q lacks field %d, %s", lines[1], i, want)
		}
	}
	if !strings.Contains(lines[2], `/w/a\nclaude-sandbox: forged/.git`) {
		t.Errorf("row %q lacks the path escaped", lines[2])
	}
}

// The log holds what a terminal acts on as JSON escapes, and reads back
// the same.
func TestLogEscapesForTheTerminal(t *testing.T) {
	l := &Log{Path: filepath.Join(t.TempDir(), "denials.log"), Workspace: "/w"}
	path := "/w/x\x1b]52;c;ZQ==\x07\u009b2J\u202e/.git"
	l.RecordPath(path, "refused")
	data, err := os.ReadFile(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(data, "\x1b\x07\u202e\u009b") {
		t.Errorf("the log holds a control raw: %q", data)
	}
	ds, err := Recent(l.Path, 1)
	if err != nil || len(ds) != 1 || ds[0].Path != path {
		t.Errorf("Recent = %+v (%v), want the path %q", ds, err, path)
	}
}

// A refused push is recorded with its repository and ref, the ref escaped
// for the terminal in the log, and reads back as recorded.
func TestLogRecordsPushes(t *testing.T) {
	l := &Log{Path: filepath.Join(t.TempDir(), "denials.log"), Workspace: "/w"}
	l.RecordPush("https://github.com/o/r", "refs/heads/x\u202e", "not in push-ref")
	data, err := os.ReadFile(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsRune(data, '\u202e') {
		t.Errorf("the log holds a control raw: %q", data)
	}
	ds, err := Recent(l.Path, 5)
	if err != nil || len(ds) != 1 || ds[0].Repo != "https://github.com/o/r" || ds[0].Ref != "refs/heads/x\u202e" || ds[0].Reason != "not in push-ref" {
		t.Errorf("Recent = %+v (%v), want the push", ds, err)
	}
}

// A refused request to a forge's API is recorded with its host and
// request, and reads back as recorded.
func TestLogRecordsRequests(t *testing.T) {
	l := &Log{Path: filepath.Join(t.TempDir(), "denials.log"), Workspace: "/w"}
	l.RecordRequest("api.github.com:443", "PATCH /repos/o/r/git/refs/heads/main", "not in forge-api")
	ds, err := Recent(l.Path, 5)
	if err != nil || len(ds) != 1 || ds[0].Host != "api.github.com:443" || ds[0].Request != "PATCH /repos/o/r/git/refs/heads/main" || ds[0].Reason != "not in forge-api" {
		t.Errorf("Recent = %+v (%v), want the request", ds, err)
	}
}

// The forge gate records its refusals here.
var _ forgepush.Recorder = (*Log)(nil)

// A push the forge gate refuses is recorded through the gate's Record,
// one denial a ref, with the repository's URL as the log shows it.
func TestLogRecordsTheGatesRefusal(t *testing.T) {
	rules, err := forgepush.ParseList([]string{"refs/heads/claude/*"})
	if err != nil {
		t.Fatal(err)
	}
	oid := strings.Repeat("1", 40)
	body := fmt.Sprintf("%04x%s0000", 4+len(oid)*2+2+len("refs/heads/main\x00report-status\n"), oid+" "+oid+" refs/heads/main\x00report-status\n")
	repo, _ := url.Parse("https://x:placeholder@github.com/o/r.git")
	_, refused, err := forgepush.NewGate(forgepush.Rules{Update: rules, Force: rules}).Check(context.Background(), nil, repo, strings.NewReader(body))
	if err != nil || refused == nil {
		t.Fatalf("Check = %v, %v; want refused", refused, err)
	}
	l := &Log{Path: filepath.Join(t.TempDir(), "denials.log"), Workspace: "/w"}
	refused.Record(l)
	ds, err := Recent(l.Path, 5)
	if err != nil || len(ds) != 1 || ds[0].Repo != "https://github.com/o/r.git" || ds[0].Ref != "refs/heads/main" || ds[0].Reason != "not in push-ref (refs/heads/claude/*)" {
		t.Errorf("Recent = %+v (%v), want main refused", ds, err)
	}
}
