// Package testscripts holds the golden and live scenarios of claude-sandbox,
// one txtar file per policy rule or bad input, named area first and kind
// last (kindOf): each kind has its own test function.
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
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/claude-sandbox/claude-sandbox/cli"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/layout/layouttest"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

func TestMain(m *testing.M) {
	if exe, err := os.Executable(); err == nil && exe == layout.InsideWrapper {
		// Claude Code's wrapper inside a sandbox of background sessions,
		// whatever name Claude Code gives the process (cli.Main).
		os.Exit(runCLI())
	}
	testscript.Main(m, map[string]func(){
		"claude":           func() { os.Exit(runCLI()) },
		"claude-sandbox":   func() { os.Exit(runCLI()) },
		"probe":            func() { os.Exit(probe(os.Args[1:])) },
		"serve":            func() { os.Exit(serve(os.Args[1:])) },
		"dns-log":          func() { os.Exit(dnsLog(os.Args[1:])) },
		"standin-api":      func() { os.Exit(standinAPI(os.Args[1:])) },
		"redteam-script":   func() { os.Exit(redteamScript(os.Args[1:])) },
		"redteam-verdicts": func() { os.Exit(redteamVerdicts(os.Args[1:])) },
		"redteam-table":    func() { os.Exit(redteamTable(os.Args[1:])) },
		"redteam-verify":   func() { os.Exit(redteamVerify(os.Args[1:])) },
		"start-claude":     func() { os.Exit(startClaude(os.Args[1:])) },
		"seccomp-filter":   func() { os.Exit(seccompFilter(os.Args[1:])) },
		"flood":            func() { os.Exit(probe(append([]string{"flood"}, os.Args[1:]...))) },
		"no-landlock":      func() { os.Exit(noLandlock(os.Args[1:])) },
		"casefs":           func() { os.Exit(casefsServe(os.Args[1:])) },

		// The IDE's and the SDKs' process wrapper (ADR 0023).
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

// runCLI runs the product's entry point with the script's paths
// (layouttest.FromEnv: only test harnesses read the CS_* variables).
func runCLI() int {
	return cli.Main(layouttest.FromEnv(), os.Args[0], os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
}

// liveReason is empty when bwrap can create a sandbox here.
func liveReason() string {
	bwrap, err := host.FindBwrap(layout.Installed())
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

// A kind of script, told by its name (kindOf). Each kind has a test of its
// own that works out only the preconditions of its scripts, so running one
// golden script never makes a container or downloads Claude Code, and a
// script may ask only the conditions of its kind: a script named for the
// wrong kind fails, naming the kind its conditions belong to.
type kind struct {
	name string
	// conds are the conditions of machine support its scripts may ask;
	// [root] is every kind's.
	conds []string
	// fake: its scripts get a fake Claude Code binary as $FAKE_CLAUDE.
	fake bool
	// programs are those its scripts need under CI=true (npm for the real
	// Claude Code, tmux for the terminal scripts).
	programs []string
	// generated writes the scripts of the kind made at test time.
	generated func(t *testing.T) string
}

var kinds = map[string]kind{
	"golden":    {name: "golden", fake: true, generated: helpScript},
	"live":      {name: "live", fake: true, conds: []string{"live", "cgroup", "fuse"}, programs: []string{"tmux", "npm"}},
	"container": {name: "container", conds: []string{"container", "live"}, fake: true, programs: []string{"npm", "tmux"}},
	"debian":    {name: "debian", conds: []string{"debian"}, programs: []string{"npm"}},
	"redteam":   {name: "redteam", conds: []string{"live", "container", "cgroup"}, programs: []string{"npm"}},
}

// kindOf is the kind of the script in file: the red-team suite by name,
// else the last word of its name (network_live, install_packages_container,
// feature_debian), else golden.
func kindOf(file string) string {
	name := strings.TrimSuffix(filepath.Base(file), ".txtar")
	if name == "redteam" {
		return "redteam"
	}
	for _, k := range []string{"live", "container", "debian"} {
		if strings.HasSuffix(name, "_"+k) {
			return k
		}
	}
	return "golden"
}

// TestGolden runs the scripts that need nothing of the machine: argv and
// conf goldens, the installer and promote under --root, the CLI.
func TestGolden(t *testing.T) { runKind(t, kinds["golden"]) }

// TestLive runs the *_live scripts: bwrap for real, probed from inside.
func TestLive(t *testing.T) {
	lane(t)
	runKind(t, kinds["live"])
}

// TestContainer runs the *_container scripts: the installer for real in a
// throwaway container.
func TestContainer(t *testing.T) {
	lane(t)
	runKind(t, kinds["container"])
}

// TestDebian runs the *_debian scripts: the feature installed into a
// container over a minimal Debian made with debootstrap.
func TestDebian(t *testing.T) {
	lane(t)
	runKind(t, kinds["debian"])
}

// TestRedteam runs the red-team suite: the real Claude Code attacking the
// sandbox (docs/redteam.md).
func TestRedteam(t *testing.T) {
	lane(t)
	runKind(t, kinds["redteam"])
}

// A precondition is a condition scripts ask ([live]) and what makes it
// false here; why is worked out once per test process.
type precondition struct {
	what string
	why  func() string
}

var (
	cgroups       = sync.OnceValues(cgroupSupport)
	containerWhy  = sync.OnceValue(containerReason)
	preconditions = map[string]precondition{
		"live":      {"the live sandbox scripts", sync.OnceValue(liveReason)},
		"container": {"the installer container scripts", containerWhy},
		"debian":    {"the feature test in Debian", sync.OnceValue(debianContainerReason)},
		"fuse":      {"the scripts on a FUSE file system", sync.OnceValue(fuseReason)},
		"cgroup": {"the scripts under a pids or memory cgroup", sync.OnceValue(func() string {
			_, why := cgroups()
			return why
		})},
	}
)

// debianContainerReason is empty when the Debian root exists or can be
// made here, and throwaway containers over it can.
func debianContainerReason() string {
	if why := containerWhy(); why != "" {
		return why
	}
	return debianReason()
}

func runKind(t *testing.T, k kind) {
	t.Parallel()
	files, err := filepath.Glob("*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return kindOf(f) != k.name })
	if k.generated != nil {
		files = append(files, k.generated(t))
	}
	for _, c := range k.conds {
		if why := preconditions[c].why(); why != "" {
			cannotRun(t, preconditions[c].what, why)
		}
	}
	for _, prog := range k.programs {
		if _, err := exec.LookPath(prog); err != nil {
			cannotRun(t, fmt.Sprintf("the %s scripts that need %s", k.name, prog), "it is not installed")
		}
	}
	fake := ""
	if k.fake {
		fake = filepath.Join(t.TempDir(), "fake-claude")
		if out, err := exec.Command("go", "build", "-o", fake, "./testdata/fakeclaude").CombinedOutput(); err != nil {
			t.Fatalf("building the fake Claude Code: %v\n%s", err, out)
		}
	}
	testscript.Run(t, testscript.Params{
		Files:               files,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_GOLDEN") == "1",
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			if _, ok := preconditions[cond]; !ok {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			if !slices.Contains(k.conds, cond) {
				return false, fmt.Errorf("[%s] is not a condition of %s scripts: name the script for its kind (%s)", cond, k.name, kindNames(cond))
			}
			return preconditions[cond].why() == "", nil
		},
		Setup: func(env *testscript.Env) error {
			shareMachine(env)
			if fake != "" {
				env.Setenv("FAKE_CLAUDE", fake)
			}
			return setup(env)
		},
		Cmds: commands(t),
	})
}

// alone are the scripts that run with the machine to themselves: the
// warden's stress keeps twelve threads busy without rest, and beside it a
// terminal test's real Claude Code took more than a minute to start.
var alone = map[string]bool{"warden_answers_live": true}

// machine is held shared by every script of every kind, and whole by one
// of alone.
var machine sync.RWMutex

// shareMachine takes the script's hold on the machine, given back when the
// script ends.
func shareMachine(env *testscript.Env) {
	name := ""
	if n, ok := env.T().(interface{ Name() string }); ok {
		name = path.Base(n.Name())
	}
	if alone[name] {
		machine.Lock()
		env.Defer(machine.Unlock)
		return
	}
	machine.RLock()
	env.Defer(machine.RUnlock)
}

// kindNames says how the scripts of the kinds that may ask cond are named.
func kindNames(cond string) string {
	var names []string
	for _, k := range kinds {
		if slices.Contains(k.conds, cond) {
			if k.name == "redteam" {
				names = append(names, "redteam.txtar")
			} else {
				names = append(names, "AREA_"+k.name+".txtar")
			}
		}
	}
	slices.Sort(names)
	return strings.Join(names, " or ")
}

// commands are the script commands every kind has.
func commands(t *testing.T) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"workfile":      workfile,
		"container":     container,
		"debian":        debian,
		"feature-stage": featureStage(repo),
		"cgroup": func(ts *testscript.TestScript, neg bool, args []string) {
			parents, _ := cgroups()
			cgroupCmd(parents)(ts, neg, args)
		},
		"throwaway-user":       throwawayUser,
		"casefold":             casefold,
		"term":                 term,
		"serve-files":          serveFiles,
		"serve-echo":           serveEcho,
		"serve-upstream-proxy": serveUpstreamProxy,
		"serve-release":        serveRelease,
		"serve-standin":        serveStandin,
		"serve-token-endpoint": serveTokenEndpoint,
		"serve-forge":          serveForge,
		"hostile":              hostile,
		"own-copies":           ownCopies,
	}
}

// own-copies DIR gives every file in DIR that has other names (the stand-in
// binaries, hard links of the test binary) a copy of its own: a script
// whose conf protects DIR holds them, and the launch refuses a held file
// with another name (ADR 0039).
func ownCopies(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: own-copies DIR")
	}
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	for _, e := range entries {
		path := filepath.Join(ts.MkAbs(args[0]), e.Name())
		fi, err := os.Lstat(path)
		ts.Check(err)
		if !fi.Mode().IsRegular() || fi.Sys().(*syscall.Stat_t).Nlink == 1 {
			continue
		}
		data, err := os.ReadFile(path)
		ts.Check(err)
		ts.Check(os.WriteFile(path+".copy", data, fi.Mode().Perm()))
		ts.Check(os.Rename(path+".copy", path))
	}
}

// setup gives every script its own user, home, workspace and stand-in binary.
func setup(env *testscript.Env) error {
	work := env.WorkDir
	repo, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	env.Setenv("REPO", repo)
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
	// How many calls each run of warden_answers_live makes.
	env.Setenv("STRESS_CALLS", cmp.Or(os.Getenv("CLAUDE_SANDBOX_STRESS_CALLS"), "40000"))
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
// directory spelled $WORK, the directory testscript runs its commands
// from spelled $BIN, and the hash in a workspace's tree of the sandbox's
// own directories (which hashes a path below $WORK) spelled HASH, so a
// golden compared with cmp can be updated.
var workspaceKey = regexp.MustCompile(`(/claude-sandbox/(?:caches|state)/[^/\s]+)-[0-9a-f]{16}/`)

func workfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: workfile OUT")
	}
	out := strings.ReplaceAll(ts.ReadFile("stdout"), ts.Getenv("WORK"), "$WORK")
	out = workspaceKey.ReplaceAllString(out, "$1-HASH/")
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

// Every script named alone exists: a renamed one would share the machine
// again unseen.
func TestAloneScriptsExist(t *testing.T) {
	for name := range alone {
		if _, err := os.Stat(name + ".txtar"); err != nil {
			t.Errorf("alone names %s: %v", name, err)
		}
	}
}

// cannotRun says loudly that what cannot run here, and why, so a skip is
// never silent; under CI=true, where everything must run, it fails the
// test instead.
func cannotRun(t *testing.T, what, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s must run under CI=true, but: %s", what, why)
	}
	fmt.Fprintf(os.Stderr, "\n!!! SKIPPING %s: %s\n\n", strings.ToUpper(what), why)
}
