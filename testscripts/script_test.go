// Package testscripts holds the golden and live scenarios of claude-sandbox,
// one txtar file per policy rule or bad input (area-prefixed names).
//
// Each script runs in its own $WORK with a fake passwd entry (home
// $WORK/home), the workspace $WORK/proj as the working directory, and a
// stand-in for the real Claude Code ($WORK/proj/.bin/real-claude) that checks
// it was given --no-chrome and then runs its arguments. Live scripts run
// bwrap for real and look from inside with the probe command.
//
// Set UPDATE_GOLDEN=1 to rewrite `cmp` goldens in the txtar files.
package testscripts

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/claude-sandbox/claude-sandbox/cli"
	"github.com/claude-sandbox/claude-sandbox/launcher"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"claude":           func() { os.Exit(runCLI()) },
		"claude-sandbox":   func() { os.Exit(runCLI()) },
		"probe":            func() { os.Exit(probe(os.Args[1:])) },
		"serve":            func() { os.Exit(serve(os.Args[1:])) },
		"echo-api":         func() { os.Exit(echoAPI(os.Args[1:])) },
		"dns-log":          func() { os.Exit(dnsLog(os.Args[1:])) },
		"standin-api":      func() { os.Exit(standinAPI(os.Args[1:])) },
		"redteam-script":   func() { os.Exit(redteamScript(os.Args[1:])) },
		"redteam-verdicts": func() { os.Exit(redteamVerdicts(os.Args[1:])) },
		"redteam-table":    func() { os.Exit(redteamTable(os.Args[1:])) },
		"redteam-verify":   func() { os.Exit(redteamVerify(os.Args[1:])) },
		"start-claude":     func() { os.Exit(startClaude(os.Args[1:])) },
		"seccomp-filter":   func() { os.Exit(seccompFilter(os.Args[1:])) },
		"flood":            func() { os.Exit(probe(append([]string{"flood"}, os.Args[1:]...))) },

		// The IDE's and the SDKs' process wrapper (ADR 0021).
		"claude-sandbox-wrap": func() { os.Exit(runCLI()) },
	})
}

// seccompFilter OUT writes the sandbox's own seccomp program to OUT: a
// stand-in for a container runtime's profile that refuses new user
// namespaces, as Docker's default does.
func seccompFilter(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: seccomp-filter OUT")
		return 2
	}
	if err := os.WriteFile(args[0], sandbox.SeccompProgram(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// runCLI runs the product's entry point with the script's paths. Only this
// test harness reads the CS_* variables; the product has no such override.
func runCLI() int {
	p := launcher.Default
	if v := os.Getenv("CS_CONF"); v != "" {
		p.Conf = v
	}
	if v := os.Getenv("CS_REAL"); v != "" {
		p.RealBinary = v
	}
	if v := os.Getenv("CS_PASSWD"); v != "" {
		p.Passwd = v
	}
	if v := os.Getenv("CS_MASKS"); v != "" {
		p.Masks = strings.Split(v, ":")
	}
	if v := os.Getenv("CS_ALLOW_UNSANDBOXED"); v != "" {
		p.AllowUnsandboxed = v
	}
	if v := os.Getenv("CS_OUTSIDE_SETTINGS"); v != "" {
		p.OutsideSettings = v
	}
	if v := os.Getenv("CS_INSIDE_SETTINGS"); v != "" {
		p.InsideSettings = v
	}
	if v := os.Getenv("CS_BWRAP_PATHS"); v != "" {
		launcher.BwrapPaths = strings.Split(v, ":")
	}
	return cli.Main(p, os.Args[0], os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
}

// liveReason is empty when bwrap can create a sandbox here.
func liveReason() string {
	bwrap, err := launcher.FindBwrap()
	if err != nil {
		return err.Error()
	}
	if _, err := exec.LookPath("socat"); err != nil {
		return "socat is not installed"
	}
	out, err := exec.Command(bwrap, "--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--", "/bin/true").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("bwrap cannot create a sandbox here: %s", strings.TrimSpace(string(out)))
	}
	return ""
}

func TestScripts(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "fake-claude")
	if out, err := exec.Command("go", "build", "-o", fake, "./testdata/fakeclaude").CombinedOutput(); err != nil {
		t.Fatalf("building the fake Claude Code: %v\n%s", err, out)
	}
	why := liveReason()
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("live sandbox tests must run under CI=true, but: %s", why)
		}
		fmt.Fprintf(os.Stderr, "\n!!! SKIPPING LIVE SANDBOX SCRIPTS: %s\n\n", why)
	}
	containerWhy := containerReason()
	if containerWhy != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("installer container tests must run under CI=true, but: %s", containerWhy)
		}
		fmt.Fprintf(os.Stderr, "\n!!! SKIPPING INSTALLER CONTAINER SCRIPTS: %s\n\n", containerWhy)
	}
	debianWhy := ""
	if containerWhy == "" {
		debianWhy = debianReason()
	} else {
		debianWhy = containerWhy
	}
	if debianWhy != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the feature test's Debian container must work under CI=true, but: %s", debianWhy)
		}
		fmt.Fprintf(os.Stderr, "\n!!! SKIPPING THE FEATURE TEST IN DEBIAN: %s\n\n", debianWhy)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cgroups, cgroupWhy := cgroupSupport()
	if cgroupWhy != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the scripts that limit a session's processes and memory must run under CI=true, but no cgroup can be made: %s", cgroupWhy)
		}
		fmt.Fprintf(os.Stderr, "\n!!! SKIPPING THE SCRIPTS UNDER A PIDS OR MEMORY CGROUP: %s\n\n", cgroupWhy)
	}
	if _, err := exec.LookPath("npm"); err != nil && os.Getenv("CI") == "true" {
		t.Fatalf("the red-team suite and the npm install test must run under CI=true, but npm is missing")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the terminal scripts (live_terminal*) must run under CI=true, but tmux is missing")
		}
		fmt.Fprintf(os.Stderr, "\n!!! SKIPPING THE TERMINAL SCRIPTS (live_terminal*): tmux is not installed\n\n")
	}
	testscript.Run(t, testscript.Params{
		Dir:                 ".",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_GOLDEN") == "1",
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "live":
				return why == "", nil
			case "container":
				return containerWhy == "", nil
			case "root":
				return os.Geteuid() == 0, nil
			case "debian":
				return debianWhy == "", nil
			case "cgroup":
				return cgroupWhy == "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("FAKE_CLAUDE", fake)
			return setup(env)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"workfile":       workfile,
			"container":      container,
			"debian":         debian,
			"feature-stage":  featureStage(repo),
			"cgroup":         cgroupCmd(cgroups),
			"throwaway-user": throwawayUser,
			"term":           term,
		},
	})
}

// setup gives every script its own user, home, workspace and stand-in binary.
func setup(env *testscript.Env) error {
	work := env.WorkDir
	for _, d := range []string{"etc", "home", "proj/.bin"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			return err
		}
	}
	passwd := fmt.Sprintf("tester:x:%d:%d:Test User:%s:/bin/sh\n", os.Getuid(), os.Getgid(), filepath.Join(work, "home"))
	if err := os.WriteFile(filepath.Join(work, "etc/passwd"), []byte(passwd), 0o644); err != nil {
		return err
	}
	real := filepath.Join(work, "proj/.bin/real-claude")
	stand := "#!/bin/sh\n[ \"$1\" = --no-chrome ] || { echo \"real-claude: not given --no-chrome first: $*\" >&2; exit 99; }\nshift\nexec \"$@\"\n"
	if err := os.WriteFile(real, []byte(stand), 0o755); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, name := range []string{"probe", "claude", "claude-sandbox"} {
		if err := linkOrCopy(self, filepath.Join(work, "proj/.bin", name)); err != nil {
			return err
		}
	}
	env.Cd = filepath.Join(work, "proj")
	env.Setenv("CS_CONF", filepath.Join(work, "etc/claude-sandbox.conf"))
	env.Setenv("CS_PASSWD", filepath.Join(work, "etc/passwd"))
	env.Setenv("CS_REAL", real)
	env.Setenv("CS_MASKS", "/run:/tmp")
	env.Setenv("CS_OUTSIDE_SETTINGS", filepath.Join(work, "etc/claude-sandbox-outside.json"))
	env.Setenv("CS_INSIDE_SETTINGS", filepath.Join(work, "proj/.bin/inside-settings.json"))
	if err := os.WriteFile(filepath.Join(work, "proj/.bin/inside-settings.json"), []byte("{}\n"), 0o644); err != nil {
		return err
	}
	env.Setenv("PROBE", filepath.Join(work, "proj/.bin/probe"))
	env.Setenv("HOME", filepath.Join(work, "home"))
	// What npm needs to reach its registry on this machine (a proxy, an
	// extra CA), prefixed so that no other script's environment changes.
	for _, name := range []string{"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"} {
		if v, ok := os.LookupEnv(name); ok {
			env.Setenv("HOSTENV_"+name, v)
		}
	}
	env.Setenv("WORK_ID", fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()))
	return nil
}

func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o755)
}

// workfile OUT writes the last command's stdout to OUT with the work
// directory spelled $WORK and the directory testscript runs its commands
// from spelled $BIN, so a golden compared with cmp can be updated.
func workfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: workfile OUT")
	}
	out := strings.ReplaceAll(ts.ReadFile("stdout"), ts.Getenv("WORK"), "$WORK")
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "claude-sandbox")); err == nil {
			out = strings.ReplaceAll(out, dir+"/", "$BIN/")
			break
		}
	}
	if err := os.WriteFile(ts.MkAbs(args[0]), []byte(out), 0o644); err != nil {
		ts.Fatalf("%v", err)
	}
}

// containerScript runs its arguments as root in a throwaway container:
// copy-on-write overlays over the system directories (the changes vanish
// with the mount namespace), with any claude-sandbox install of the host
// removed first, so every run starts from a machine without the product.
// The container has its own PID namespace (unshareArgs): whatever a
// script leaves running dies with it instead of holding the test's pipes.
const containerScript = `set -e
for d in /usr /etc /home /root /opt /var; do
	[ -d "$d" ] || continue
	mkdir -p "$CONTAINER$d.upper" "$CONTAINER$d.work"
	mount -t overlay overlay -o "lowerdir=$d,upperdir=$CONTAINER$d.upper,workdir=$CONTAINER$d.work" "$d"
done
rm -rf /usr/libexec/claude-sandbox /usr/local/bin/claude /usr/local/bin/claude-sandbox /etc/claude-sandbox.conf /etc/claude-code
exec "$@"`

// unshareArgs runs script (with its arguments after these) in a new mount
// and PID namespace: whatever it leaves running dies with it.
func unshareArgs(script string) []string {
	return []string{"--mount", "--propagation", "private", "--pid", "--fork", "--mount-proc", "--", "sh", "-c", script, "sh"}
}

// containerReason is empty when throwaway containers can be made here.
func containerReason() string {
	if os.Geteuid() != 0 {
		return "they need root (unshare and overlay mounts)"
	}
	dir, err := os.MkdirTemp("", "claude-sandbox-container-probe")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("unshare", append(unshareArgs(containerScript), "true")...)
	cmd.Env = append(os.Environ(), "CONTAINER="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Sprintf("a throwaway container cannot be made here: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return ""
}

// container CMD [ARGS...] runs CMD as root in a throwaway container whose
// system directories are copy-on-write, so the real installer runs on the
// true paths without changing the machine.
func container(ts *testscript.TestScript, neg bool, args []string) {
	runContained(ts, neg, "container", containerScript, args)
}

// runContained runs args in a new mount and PID namespace through script,
// with $CONTAINER a fresh directory under $WORK for its overlays.
func runContained(ts *testscript.TestScript, neg bool, name, script string, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: %s CMD [ARGS...]", name)
	}
	dir, err := os.MkdirTemp(ts.Getenv("WORK"), name+"-")
	ts.Check(err)
	ts.Setenv("CONTAINER", dir)
	err = ts.Exec("unshare", append(unshareArgs(script), args...)...)
	if err != nil && !neg {
		ts.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	if err == nil && neg {
		ts.Fatalf("%s %s: unexpected success", name, strings.Join(args, " "))
	}
}

// serve DIR serves DIR over HTTP on a loopback port and writes its URL to
// DIR/.url; scripts run it in the background.
func serve(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: serve DIR")
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp := filepath.Join(args[0], ".url.tmp")
	if err := os.WriteFile(tmp, []byte("http://"+ln.Addr().String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Rename(tmp, filepath.Join(args[0], ".url")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(os.Stderr, http.Serve(ln, http.FileServer(http.Dir(args[0]))))
	return 1
}
