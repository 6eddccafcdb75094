package launcher

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/atomicfile"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/warden"
	"golang.org/x/sys/unix"
)

// Background sessions (ADR 0026). Claude Code's background service
// (`claude daemon run`) runs in a sandbox of its own, which the launcher
// starts detached from the terminal, on the user's own `claude --bg`,
// `claude agents`, ... outside, never on a request from inside. Its sessions
// run in that same sandbox. Every sandbox of the same user and workspace
// sees one host directory at /tmp/cc-daemon-UID, where the service's sockets
// are; the wardens record the sockets bound there in a registry no sandbox
// sees, and let a client's connect reach them.

// backgroundCommands are Claude Code's commands that reach its background
// service, when one is the first argument.
var backgroundCommands = []string{"agents", "attach", "kill", "logs", "respawn", "rm", "stop"}

// daemonCommands are the subcommands of `claude daemon` that ask the
// workspace's service about itself (its process, its log) or stop it, when
// one comes right after `daemon`: Claude Code takes its first word that is
// no option as the subcommand, and a strict position leaves no word to
// disagree on.
var daemonCommands = []string{"logs", "status", "stop"}

// A role is what a launch is to the background service.
type role int

const (
	plainLaunch role = iota
	clientLaunch
	controlLaunch // a client that reaches the service if it runs, and never starts one
	serviceLaunch
)

// errDaemon refuses `claude daemon` but for daemonCommands.
var errDaemon = errors.New("`claude daemon` is refused but for `claude daemon status`, `claude daemon logs` and `claude daemon stop` (options after the subcommand), which run sandboxed: the launcher runs Claude Code's background service itself, in a sandbox of its own, when `claude --bg` or `claude agents` needs it (ADR 0026)")

// backgroundRole says whether args reach the background service: `--bg` or
// `--background` before `--`, or one of backgroundCommands first, or
// `daemon` and one of daemonCommands. The rest of `claude daemon` is
// refused: the launcher runs the service itself.
func backgroundRole(args []string) (role, error) {
	if len(args) > 0 {
		if args[0] == "daemon" {
			if len(args) > 1 && slices.Contains(daemonCommands, args[1]) {
				return controlLaunch, nil
			}
			return plainLaunch, errDaemon
		}
		for _, c := range backgroundCommands {
			if args[0] == c {
				return clientLaunch, nil
			}
		}
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--bg" || a == "--background" || strings.HasPrefix(a, "--bg=") || strings.HasPrefix(a, "--background=") {
			return clientLaunch, nil
		}
	}
	return plainLaunch, nil
}

// bgDirs are the host directories of one user's and workspace's background
// service: under the user's own 0700 directory in /tmp, which the sandbox
// hides behind its private /tmp.
type bgDirs struct {
	dir      string // the workspace's: the locks and the service's log
	sockets  string // bound at /tmp/cc-daemon-UID in every sandbox of the workspace
	registry string // the sockets the wardens recorded there; seen by no sandbox
}

func backgroundDirs(workspace string) (*bgDirs, error) {
	uid := os.Getuid()
	sum := sha256.Sum256([]byte(workspace))
	base := layout.BackgroundDir(uid)
	d := &bgDirs{dir: filepath.Join(base, hex.EncodeToString(sum[:8]))}
	d.sockets, d.registry = filepath.Join(d.dir, "sockets"), filepath.Join(d.dir, "registry")
	for _, dir := range []string{base, d.dir, d.sockets, d.registry} {
		if err := ownDir(dir, uid); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// ownDir makes dir, or checks the one there: a directory (not a link) of
// uid's, mode 0700. Another user could have made it first in /tmp.
func ownDir(dir string, uid int) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("background sessions need %s: %w", dir, cause(err))
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return fmt.Errorf("background sessions need %s: %w", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != uid || st.Mode&0o7777 != 0o700 {
		return fmt.Errorf("background sessions are refused: %s is not a directory of this user's with mode 0700 (someone else made it?); remove it", dir)
	}
	return nil
}

// hiddenInside checks that no sandbox of plan sees the background
// directories but the socket directory: /tmp is one of its masks, and no
// bind but the socket directory's has a source that holds them or lies
// in them.
func (d *bgDirs) hiddenInside(plan *sandbox.Plan) error {
	base := filepath.Dir(d.dir)
	masked := false
	for _, m := range plan.Mounts {
		switch {
		case m.Op == sandbox.OpTmpfs && m.Rule == sandbox.RuleMask && subtree.Of(m.Dest).Contains(base):
			masked = true
		case m.Source != "" && m.Rule != sandbox.RuleRoot && !(m.Rule == sandbox.RuleBackground && m.Source == d.sockets) && (subtree.Of(m.Source).Contains(base) || subtree.Of(base).Contains(m.Source)):
			return fmt.Errorf("background sessions are refused: %s, where the launcher keeps what the sandbox must not reach, overlaps %s, which the sandbox sees (%s)", base, m.Source, m.Rule)
		}
	}
	if !masked {
		return fmt.Errorf("background sessions are refused: %s, where the launcher keeps what the sandbox must not reach, is not under one of the sandbox's masks", base)
	}
	return nil
}

// errServiceRuns ends a second service launch for a workspace: not a failure.
var errServiceRuns = errors.New("the background service of this workspace runs already")

// A bgLaunch is a launch of background sessions under way.
type bgLaunch struct {
	dirs    *bgDirs
	service bool
	running *os.File // the service's lock, held while it runs
}

// startBackground prepares a launch of role r: the shared socket
// directory and the registry of its siblings; for a client, the service
// running; for the service, its lock (nil when another launch's service
// runs: nothing to do). A control launch (`claude daemon status`) starts
// no service, and asks nothing of the API: it keeps a gateway of its own.
func startBackground(pr *Prepared, r role, env launchenv.Given, stderr io.Writer) (*bgLaunch, error) {
	d, err := backgroundDirs(pr.Resolved.Workspace())
	if err != nil {
		return nil, err
	}
	b := &bgLaunch{dirs: d, service: r == serviceLaunch}
	if b.service {
		if b.running, err = lockFile(d.dir, serviceLock, false); err != nil {
			return nil, fmt.Errorf("cannot start the background service: %w", err)
		}
		if b.running == nil {
			return nil, errServiceRuns
		}
	} else if r == clientLaunch {
		if err := ensureService(d, env, stderr); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// shared is what the sandbox of b shares with the other sandboxes of its
// user and workspace: the plan's socket directory, and the warden's view
// of its siblings.
func (b *bgLaunch) shared() (*sandbox.Background, *warden.Siblings) {
	return &sandbox.Background{SocketDir: b.dirs.sockets, UID: os.Getuid(), Service: b.service},
		&warden.Siblings{Shared: b.dirs.sockets, Registry: b.dirs.registry}
}

func (b *bgLaunch) close() {
	if b != nil && b.running != nil {
		b.running.Close()
	}
}

// The gateway file holds the service's credential proxy: its address and
// session token. Claude Code's service stops a session whose client came
// with other gateway variables (ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN)
// than its own, so every client of the service gets the service's.
const gatewayFile = "gateway"

type gateway struct {
	Addr  string `json:"addr"`
	Token string `json:"token"`
}

// publishGateway writes the service's gateway g for its clients, in the
// directory no sandbox sees.
func (b *bgLaunch) publishGateway(g gateway) error {
	if b == nil || !b.service {
		return nil
	}
	path := filepath.Join(b.dirs.dir, gatewayFile)
	if g.Token == "" {
		_ = os.Remove(path)
		return nil
	}
	// Replaced whole: a client reading meanwhile, or a service killed
	// while writing, never leaves half a gateway.
	data, _ := json.Marshal(g)
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("cannot start the background service: %w", err)
	}
	return nil
}

// adoptGateway is the gateway of a client of the service, given own, the
// one it would have alone (zero when it proxies no login): the service's
// session token, and in open mode its credential proxy's address, where
// the client runs no proxy of its own (shared); in allowlist mode each
// sandbox has its own at the same address inside.
func (b *bgLaunch) adoptGateway(own gateway, network string) (g gateway, shared bool, err error) {
	if own.Token == "" {
		return own, false, nil
	}
	data, err := os.ReadFile(filepath.Join(b.dirs.dir, gatewayFile))
	if errors.Is(err, os.ErrNotExist) {
		return own, false, errors.New("background sessions are refused: this launch keeps the Claude login outside the sandbox, and the background service running for this workspace does not; stop its sessions (`claude stop`) and start again")
	}
	var service gateway
	if err == nil {
		err = json.Unmarshal(data, &service)
	}
	if err != nil || service.Token == "" {
		return own, false, fmt.Errorf("cannot read the background service's gateway: %v", err)
	}
	if network == sandbox.NetworkAllowlist {
		return gateway{Token: service.Token, Addr: own.Addr}, false, nil
	}
	return service, true, nil
}

// lockFile opens name in dir and locks it (flock: released when the
// process ends, however it ends); with wait false, it returns nil if
// someone else holds it.
func lockFile(dir, name string, wait bool) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, err
	}
	return f, nil
}

const (
	startLock   = "start.lock"   // held by a launch while it starts the service
	serviceLock = "service.lock" // held by the service's launcher for as long as it runs
	serviceLog  = "service.log"  // the service launcher's own messages
	serviceWait = 30 * time.Second
)

// ensureService starts the background service of d, detached, unless it
// runs, and waits until its control socket is there and recorded.
func ensureService(d *bgDirs, env launchenv.Given, stderr io.Writer) error {
	start, err := lockFile(d.dir, startLock, true)
	if err != nil {
		return fmt.Errorf("cannot start the background service: %w", err)
	}
	defer start.Close()
	if held, err := lockFile(d.dir, serviceLock, false); err != nil {
		return fmt.Errorf("cannot start the background service: %w", err)
	} else if held == nil {
		return nil // it runs
	} else {
		held.Close()
	}
	// What a service that ended left: its sockets are dead, and so are the
	// identities recorded.
	for _, dir := range []string{d.sockets, d.registry} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the launcher's own binary: %w", err)
	}
	logPath := filepath.Join(d.dir, serviceLog)
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("cannot start the background service: %w", err)
	}
	defer log.Close()
	cmd := &exec.Cmd{
		Path:        self,
		Args:        []string{"claude-sandbox", "background-service"},
		Env:         env.List(),
		Stdout:      log,
		Stderr:      log,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true}, // no terminal, no session of the caller's
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start the background service: %w", err)
	}
	ended := make(chan struct{})
	go func() { _ = cmd.Wait(); close(ended) }()
	deadline := time.After(serviceWait)
	for {
		if matches, _ := filepath.Glob(filepath.Join(d.sockets, "*", "control.sock")); len(matches) > 0 && warden.Registered(d.registry, matches[0]) {
			return nil
		}
		select {
		case <-ended:
			return fmt.Errorf("the background service ended as it started; its messages are in %s", logPath)
		case <-deadline:
			return fmt.Errorf("the background service did not open its socket within %s; its messages are in %s", serviceWait, logPath)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Service is `claude-sandbox background-service`, which ensureService
// starts detached: the sandbox of Claude Code's background service for the
// workspace of the working directory, running `claude daemon run` until the
// service exits (it does when no client is connected and no background
// session runs). A second one for the same workspace ends at once.
func Service(p host.Paths, env launchenv.Given, stderr io.Writer) int {
	closeInherited()
	if host.Inside() {
		fmt.Fprintf(stderr, "claude-sandbox: the background service starts from outside the sandbox only, on the user's own `claude --bg` or `claude agents`\n")
		return host.ExitRefused
	}
	code, err := launch(p, nil, env, stderr, serviceLaunch)
	if errors.Is(err, errServiceRuns) {
		return 0
	}
	if err != nil {
		PrintRefusal(stderr, err)
		return host.ExitRefused
	}
	return code
}

// wrapInside is the wrapper inside a sandbox of background sessions, which
// Claude Code runs as CLAUDE_CODE_PROCESS_WRAPPER: it execs the Claude Code
// binary it is given, in this very sandbox, with its arguments unchanged.
// `claude daemon` runs only in the service's own sandbox: a client's
// sandbox ends with the client, and the service with it.
func wrapInside(bin string, args []string, env launchenv.Given, stderr io.Writer) int {
	if len(args) > 1 && args[1] == "daemon" {
		if role, _ := env.Lookup(sandbox.BackgroundRoleVar); role != "service" {
			fmt.Fprintf(stderr, "claude-sandbox: %s refuses `claude daemon` here: the background service runs in a sandbox of its own, which the launcher starts outside (ADR 0026)\n", layout.WrapperName)
			return host.ExitRefused
		}
	}
	argv := append([]string{}, args...)
	if filepath.Base(os.Args[0]) != layout.WrapperName {
		argv[0] = os.Args[0] // the name Claude Code gave the process ("claude bg-spare")
	}
	err := unix.Exec(bin, argv, env.List())
	fmt.Fprintf(stderr, "claude-sandbox: cannot run %s inside the sandbox: %v\n", bin, err)
	return host.ExitRefused
}
