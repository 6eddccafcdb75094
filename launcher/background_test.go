package launcher

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

func TestBackgroundRole(t *testing.T) {
	for _, c := range []struct {
		args []string
		want role
	}{
		{[]string{"--bg", "fix it"}, clientLaunch},
		{[]string{"-p", "hi", "--background"}, clientLaunch},
		{[]string{"--bg=yes"}, clientLaunch},
		{[]string{"agents", "--json"}, clientLaunch},
		{[]string{"attach", "abc"}, clientLaunch},
		{[]string{"logs", "abc"}, clientLaunch},
		{[]string{"stop", "abc"}, clientLaunch},
		{[]string{"daemon", "status"}, controlLaunch},
		{[]string{"daemon", "logs", "--log-file", "x"}, controlLaunch},
		{[]string{"daemon", "stop", "--any", "--keep-workers"}, controlLaunch},
		{[]string{"-p", "stop"}, plainLaunch},
		{[]string{"--", "--bg"}, plainLaunch},
		{nil, plainLaunch},
	} {
		got, err := backgroundRole(c.args)
		if err != nil || got != c.want {
			t.Errorf("backgroundRole(%q) = %v, %v; want %v", c.args, got, err, c.want)
		}
	}
	// The service is the launcher's to run; a subcommand Claude Code would
	// find elsewhere than right after `daemon` is not looked for.
	for _, args := range [][]string{
		{"daemon"}, {"daemon", "run"}, {"daemon", "uninstall"}, {"daemon", "bogus"},
		{"daemon", "--log-file", "x", "status"}, {"daemon", "--json-path", "status", "run"},
	} {
		if _, err := backgroundRole(args); err != errDaemon {
			t.Errorf("backgroundRole(%q): %v; want the refusal", args, err)
		}
	}
}

// The launcher's directory is seen by no sandbox: /tmp must be masked, and
// no bind but the socket directory's may hold it.
func TestBackgroundDirsHiddenInside(t *testing.T) {
	d := &bgDirs{dir: "/tmp/claude-sandbox-1000/0123456789abcdef", sockets: "/tmp/claude-sandbox-1000/0123456789abcdef/sockets"}
	masked := []sandbox.Mount{
		{Op: sandbox.OpRoBind, Source: "/", Dest: "/", Rule: sandbox.RuleRoot},
		{Op: sandbox.OpTmpfs, Dest: "/tmp", Rule: sandbox.RuleMask},
		{Op: sandbox.OpBind, Source: "/tmp/ws", Dest: "/tmp/ws", Rule: sandbox.RuleWorkspace},
		{Op: sandbox.OpBind, Source: d.sockets, Dest: "/tmp/cc-daemon-1000", Rule: sandbox.RuleBackground},
	}
	if err := d.hiddenInside(&sandbox.Plan{Mounts: masked}); err != nil {
		t.Errorf("a masked /tmp: %v", err)
	}
	for name, mounts := range map[string][]sandbox.Mount{
		"no mask":        {masked[0], masked[2], masked[3]},
		"workspace /tmp": append(append([]sandbox.Mount{}, masked...), sandbox.Mount{Op: sandbox.OpBind, Source: "/tmp", Dest: "/tmp", Rule: sandbox.RuleWorkspace}),
		"allow-write":    append(append([]sandbox.Mount{}, masked...), sandbox.Mount{Op: sandbox.OpBind, Source: "/tmp/claude-sandbox-1000", Dest: "/x", Rule: sandbox.RuleAllowWrite}),
		"registry":       append(append([]sandbox.Mount{}, masked...), sandbox.Mount{Op: sandbox.OpRoBind, Source: d.dir + "/registry", Dest: "/x", Rule: sandbox.RuleBackground}),
	} {
		if err := d.hiddenInside(&sandbox.Plan{Mounts: mounts}); err == nil {
			t.Errorf("%s: the launcher's directory is reachable inside, and no error", name)
		}
	}
}

// A directory in /tmp that someone else made, or that others can enter,
// is refused.
func TestOwnDir(t *testing.T) {
	tmp := t.TempDir()
	if err := ownDir(filepath.Join(tmp, "new"), os.Getuid()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(tmp, "new")); fi.Mode().Perm() != 0o700 {
		t.Errorf("made with %v", fi.Mode().Perm())
	}
	open := filepath.Join(tmp, "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o755)
	if err := ownDir(open, os.Getuid()); err == nil {
		t.Errorf("a directory others can enter is accepted")
	}
	if err := ownDir(filepath.Join(tmp, "new"), os.Getuid()+1); err == nil {
		t.Errorf("another user's directory is accepted")
	}
	os.Symlink(filepath.Join(tmp, "new"), filepath.Join(tmp, "link"))
	if err := ownDir(filepath.Join(tmp, "link"), os.Getuid()); err == nil {
		t.Errorf("a link is accepted")
	}
}
