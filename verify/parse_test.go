package verify

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/mountinfo"
	"github.com/claude-sandbox/claude-sandbox/internal/procstatus"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sys/unix"
)

func TestNonZeroCaps(t *testing.T) {
	in := "Name:\tclaude\nNoNewPrivs:\t1\nCapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\nSeccomp:\t2\n"
	st := procstatus.Parse([]byte(in))
	held, err := nonZeroCaps(st, "CapEff", "CapBnd")
	if err != nil || len(held) != 1 || held[0] != "CapBnd=000001ffffffffff" {
		t.Errorf("nonZeroCaps = %v, %v; want only CapBnd", held, err)
	}
	if _, err := nonZeroCaps(st, "CapAmb"); err == nil {
		t.Error("a missing Cap line was not an error")
	}
}

func TestParseStat(t *testing.T) {
	p, err := parseStat(7, "7 (my (odd) name) S 1 7 5 34816 -1")
	if err != nil || p.pid != 7 || p.ppid != 1 || p.comm != "my (odd) name" || p.session != 5 || p.tty != 34816 {
		t.Errorf("parseStat = %+v, %v", p, err)
	}
	if _, err := parseStat(7, "7 no parens"); err == nil {
		t.Error("a stat without a name parsed")
	}
}

func TestFirstProcess(t *testing.T) {
	procs := []process{{pid: 1, comm: "bwrap"}, {pid: 9, ppid: 2, comm: "sh"}, {pid: 3, ppid: 1, comm: "claude"}, {pid: 2, ppid: 1, comm: "claude"}}
	if got, err := firstProcess(procs); err != nil || got != 2 {
		t.Errorf("firstProcess = %d, %v; want 2", got, err)
	}
	if _, err := firstProcess(procs[:1]); err == nil {
		t.Error("no child of pid 1 was not an error")
	}
	// With a terminal, init runs Claude as its child.
	job := []process{{pid: 1, comm: "bwrap"}, {pid: 2, ppid: 1, comm: "claude-sandbox", args: []string{layout.InitPath, "init", "--", "claude"}}, {pid: 4, ppid: 3},
		{pid: 3, ppid: 2, comm: "claude"}, {pid: 5, ppid: 2, args: []string{"claude-sandbox", "init", "--socket-helper"}}}
	job[3].pid, job[4].pid = 5, 3 // the socket helper started first
	if got, err := firstProcess(job); err != nil || got != 5 {
		t.Errorf("firstProcess = %d, %v; want init's child 5, not the socket helper", got, err)
	}
}

func TestIDMapLines(t *testing.T) {
	if got := idMapLines("         0          0 4294967295\n"); len(got) != 1 || got[0][2] != "4294967295" {
		t.Errorf("idMapLines = %v", got)
	}
	if got := idMapLines("1000 1000 1\n0 100000 1000\n"); len(got) != 2 {
		t.Errorf("idMapLines = %v", got)
	}
}

func TestLooksSecret(t *testing.T) {
	for _, name := range []string{
		"GITHUB_TOKEN", "GH_TOKEN", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
		"PGPASSWORD", "MYSQL_PWD_PASSWD", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_PRIVATE", "NPM_CONFIG__AUTH",
		"OPENAI_APIKEY", "AZURE_DEVOPS_PAT", "SESSION_COOKIE", "db_password", "GPG_KEYS", "SMTP_PASS",
	} {
		if !looksSecret(name) {
			t.Errorf("looksSecret(%q) = false", name)
		}
	}
	for _, name := range []string{"PATH", "HOME", "TERM", "KEYBOARD_LAYOUT", "GIT_AUTHOR_NAME", "PASSENGER", "MONKEY", "PWD", "LANG"} {
		if looksSecret(name) {
			t.Errorf("looksSecret(%q) = true", name)
		}
	}
}

func TestParseNetUnix(t *testing.T) {
	in := `Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00010000 0001 01 1001 /run/docker.sock
0000000000000000: 00000002 00000000 00010000 0001 01 1002 @abstract-name
0000000000000000: 00000002 00000000 00000000 0002 01 1003 /dev/log
0000000000000000: 00000002 00000000 00000000 0005 01 1004 /run/with space.sock
0000000000000000: 00000003 00000000 00000000 0001 03 1005
0000000000000000: 00000002 00000000 00010000 0001 01 1006 /run/docker.sock
`
	got, err := parseNetUnix(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []unixSocket{
		{"unix", "/run/docker.sock", []string{"1001", "1006"}}, {"unix", "@abstract-name", []string{"1002"}},
		{"unixgram", "/dev/log", []string{"1003"}}, {"unixpacket", "/run/with space.sock", []string{"1004"}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(unixSocket{})); diff != "" {
		t.Errorf("parseNetUnix mismatch (-want +got):\n%s", diff)
	}
}

// testPlan builds a real plan, as the launcher would, for a workspace with
// a git directory and a home, both in a temporary directory.
func testPlan(t *testing.T, conf string) *sandbox.Plan {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, home := filepath.Join(dir, "proj"), filepath.Join(dir, "home")
	for _, d := range []string{filepath.Join(ws, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".git/config"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := sandbox.ParseConf("test.conf", strings.NewReader(conf))
	if err != nil {
		t.Fatal(err)
	}
	l := sandbox.Launch{User: "u", Home: home, Shell: "/bin/sh", Cwd: ws, Env: launchenv.Read([]string{"TERM=xterm", "SECRET=x"}),
		RealBinary: "/usr/libexec/claude-sandbox/claude", Masks: []string{"/run", "/tmp"}}
	plan, err := sandbox.Build(c, sandbox.SessionEnv{}, l)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// The mount on top at each point is the plan's last there, and the plan's
// directories are no mounts.
func TestFinalMounts(t *testing.T) {
	plan := testPlan(t, "share-home = .gitconfig\npass-env = MY_VAR\n")
	final := finalMounts(plan)
	for point, op := range map[string]sandbox.Op{
		"/":    sandbox.OpRoBind,
		"/dev": sandbox.OpDev, "/proc": sandbox.OpProc, "/run": sandbox.OpTmpfs, "/tmp": sandbox.OpTmpfs,
		plan.Workspace:                                    sandbox.OpBind,
		plan.Workspace + "/.git/config":                   sandbox.OpBind, // the sandbox's copy (ADR 0034)
		plan.Workspace + "/.git":                          sandbox.OpBind,
		filepath.Dir(plan.Workspace) + "/home/.gitconfig": sandbox.OpRoBindTry,
	} {
		if got := final[point].Op; got != op {
			t.Errorf("planned mount at %s is %q, want %q", point, got, op)
		}
	}
	if m, ok := final[layout.InsideMarker]; ok {
		t.Errorf("the inside marker, a directory, is taken for a mount: %+v", m)
	}
	env := planEnv(plan)
	if env["TERM"] != "xterm" || env["IS_SANDBOX"] != "1" || env["SECRET"] != "" {
		t.Errorf("policy environment = %v", env)
	}
	over := &sandbox.Plan{Mounts: []sandbox.Mount{{Op: sandbox.OpTmpfs, Dest: "/run"}, {Op: sandbox.OpRoBind, Source: "/run", Dest: "/run"}}}
	if got := finalMounts(over)["/run"].Op; got != sandbox.OpRoBind {
		t.Errorf("finalMounts()[/run] = %q, want the later --ro-bind", got)
	}
}

func TestPlanned(t *testing.T) {
	f := &facts{
		mounts: []mountinfo.Mount{
			{Point: "/w", Dev: "8:1", Root: "/srv/w"},
			{Point: "/w/.git", Dev: "8:1", Root: "/srv/w/.git"}, // a pin the session asked for
			{Point: "/w/evil", Dev: "8:1", Root: "/etc"},        // another directory, shown in the workspace
			{Point: "/w/other", Dev: "8:2", Root: "/other"},
			{Point: "/dev/null", Dev: "0:6", Root: "/null"},
			{Point: "/home/u/.claude/settings.json", Options: "ro"},
		},
		launch: &launchView{
			plan: &sandbox.Plan{Workspace: "/w", Mounts: []sandbox.Mount{
				{Op: sandbox.OpBind, Source: "/w", Dest: "/w"}, {Op: sandbox.OpDev, Dest: "/dev"},
				{Op: sandbox.OpRoBind, Source: "/home/u/.claude/settings.json", Dest: "/home/u/.claude/settings.json"},
			}},
		},
	}
	for i, want := range []struct{ any, writable bool }{
		{true, true}, {true, true}, {false, false}, {false, false}, {true, true}, {true, false},
	} {
		m := f.mounts[i]
		if got := f.planned(m, false); got != want.any {
			t.Errorf("planned(%s, false) = %v, want %v", m.Point, got, want.any)
		}
		if got := f.planned(m, true); got != want.writable {
			t.Errorf("planned(%s, true) = %v, want %v", m.Point, got, want.writable)
		}
	}
}

func TestMaskGroupsAreTheMaskedDirs(t *testing.T) {
	var groups []string
	for _, g := range [][]string{runDirs, tmpDirs, homeDirs, projectDirs} {
		groups = append(groups, g...)
	}
	if diff := cmp.Diff(sandbox.MaskedDirs(), groups, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("the checks' mask groups are not sandbox.MaskedDirs (-want +got):\n%s", diff)
	}
}

func TestRefusedAll(t *testing.T) {
	if _, err := refusedAll([]string{"a", "b"}, []error{unix.EPERM, unix.EPERM}); err != nil {
		t.Errorf("two EPERMs: %v", err)
	}
	if _, err := refusedAll([]string{"a"}, []error{nil}); err == nil || !strings.Contains(err.Error(), "a succeeded") {
		t.Errorf("a success: %v", err)
	}
	if _, err := refusedAll([]string{"a"}, []error{unix.EBADF}); err == nil || !strings.Contains(err.Error(), "not EPERM") {
		t.Errorf("EBADF: %v", err)
	}
	wrapped := errors.Join(errors.New("context"), unix.EPERM)
	if _, err := refusedAll([]string{"a"}, []error{wrapped}); err != nil {
		t.Errorf("a wrapped EPERM: %v", err)
	}
}

func TestExistingAncestor(t *testing.T) {
	dir := t.TempDir()
	if got := existingAncestor(filepath.Join(dir, "a/b/c")); got != dir {
		t.Errorf("existingAncestor = %q, want %q", got, dir)
	}
	if got := existingAncestor(dir); got != dir {
		t.Errorf("existingAncestor of an existing path = %q", got)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte("#!/bin/sh\n"), 0o644); err != nil { // not executable
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := lookPath([]string{"PATH=" + dir + ":" + bin}, "claude")
	if err != nil || got != filepath.Join(bin, "claude") {
		t.Errorf("lookPath = %q, %v", got, err)
	}
	if _, err := lookPath([]string{"PATH=" + dir}, "claude"); err == nil {
		t.Error("a non-executable file was found")
	}
}
