// Package launcher starts Claude Code inside the sandbox: it takes the facts
// of this launch from package host (the kernel and the passwd database;
// the caller's environment only as internal/launchenv read it, never its
// raw list), asks package sandbox for the plan, hands
// bwrap its argv and seccomp filter through file descriptors, and
// supervises it.
package launcher

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/doctor"
	"github.com/claude-sandbox/claude-sandbox/forge"
	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/atomicfile"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/plainfile"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/upstreamproxy"
	"golang.org/x/sys/unix"
)

// Run is the `claude` command. It never runs Claude outside a sandbox: every
// error ends the launch.
func Run(p host.Paths, args []string, env launchenv.Given, stderr io.Writer) int {
	closeInherited()
	r, err := backgroundRole(args)
	if err == nil && r != plainLaunch && host.Inside() {
		err = errors.New("background sessions start from a terminal outside the sandbox, through the launcher, never from inside a session (ADR 0026)")
	}
	if err != nil {
		PrintRefusal(stderr, err)
		return host.ExitRefused
	}
	if sandbox.VersionOnly(args) && !host.Inside() {
		// Recorded by the installer for this very file: nothing needs to run.
		if v, ok := host.RecordedVersion(p.VersionRecord, p.RealBinary); ok {
			fmt.Println(v)
			return 0
		}
	}
	if host.Inside() {
		// A nested claude (from a hook or a skill) is already confined:
		// host.Inside demands the sandbox's confinement, not just its marker.
		argv := sandbox.ClaudeCommand("claude", args)
		err := unix.Exec(p.RealBinary, argv, env.List())
		fmt.Fprintf(stderr, "claude-sandbox: cannot run %s inside the sandbox: %v\n", p.RealBinary, err)
		return host.ExitRefused
	}
	code, err := launch(p, args, env, stderr, r)
	if err != nil {
		PrintRefusal(stderr, err)
		return host.ExitRefused
	}
	return code
}

// Prepared is a checked launch: where bwrap is, the facts, and the plan.
type Prepared struct {
	Bwrap      string
	Conf       *sandbox.Conf
	Session    sandbox.SessionEnv
	Launch     sandbox.Launch
	Resolved   *sandbox.Resolved // what the plan is assembled from
	Plan       *sandbox.Plan
	Credential *authproxy.Credential // the login the launcher keeps outside; nil when it enters or there is none
	Upstream   *url.URL              // where the credential proxy sends the login; nil with no Credential
	// Via is the launching environment's proxy, which the launcher's
	// proxies go through; nil when neither runs.
	Via *upstreamproxy.Settings
	// Running is what the plan holds that only a running service or
	// listener tells: as settle expects it until the launch settles it
	// (settleRunning). Every plan and resolution reads it with Launch
	// (facts).
	Running running
	// forge is the launch's certificate authority for the forge hosts; nil
	// without forge lines (ADR 0042).
	forge *forge.Authority
}

// facts are the launch's facts with what its services tell: what the
// sandbox package plans from.
func (pr *Prepared) facts() sandbox.Launch { return pr.Running.launch(pr.Launch) }

// Prepare checks everything a launch needs and returns the plan, without
// changing anything. `claude-sandbox argv` prints what it returns.
func Prepare(p host.Paths, args []string, env launchenv.Given) (*Prepared, error) {
	pr, err := settle(p, args, env)
	if err != nil {
		return nil, err
	}
	pr.Plan = sandbox.Assemble(pr.Conf, pr.Session, pr.facts(), pr.Resolved)
	return pr, nil
}

// settle reads the facts of a launch (bwrap, the real binary, the conf,
// the session's variables, the host's facts, the login and the proxy it
// goes through) and what the plan is assembled from, and refuses what it
// cannot serve, without changing anything.
func settle(p host.Paths, args []string, env launchenv.Given) (*Prepared, error) {
	bwrap, err := host.FindBwrap(p)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(p.RealBinary); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("the real Claude Code binary is missing or not executable at %s; run `sudo claude-sandbox install`", p.RealBinary)
	}
	c, err := host.LoadConf(p.Conf)
	if err != nil {
		return nil, err
	}
	s, err := sandbox.ParseSessionEnv(env.Env)
	if err != nil {
		return nil, err
	}
	l, err := host.Facts(p, env.Env, args)
	if err != nil {
		return nil, err
	}
	pr := &Prepared{Bwrap: bwrap, Conf: c, Session: s, Launch: l}
	if err := pr.settleProxies(env.Env); err != nil {
		return nil, err
	}
	if pr.Resolved, err = sandbox.Resolve(c, s, pr.facts()); err != nil {
		return nil, err
	}
	return pr, nil
}

// settleProxies finds the login the credential proxy keeps outside, where
// it sends it, and the launching environment's proxy the launcher's
// proxies go through.
func (pr *Prepared) settleProxies(env launchenv.Env) error {
	var err error
	if pr.Conf.CredentialMode() == sandbox.CredentialsProxy {
		if pr.Credential, err = authproxy.Find(env, pr.Launch.Home); err != nil {
			return err
		}
	}
	if pr.Credential != nil {
		if pr.Upstream, err = upstream(env); err != nil {
			return err
		}
		// The real port is chosen when the launch listens (open mode).
		pr.Running.gateway = gateway{Token: authproxy.NewPlaceholder(), Addr: "127.0.0.1:0"}
	}
	if pr.forge, pr.Launch.ForgeCA, err = forgeAuthority(pr.Conf); err != nil {
		return err
	}
	if pr.forge != nil {
		pr.Launch.Args = forge.WithoutActionToken(pr.Launch.Args, env, forgeLines(pr.Conf), sandbox.ForgePlaceholder)
	}
	if pr.Credential != nil || pr.Conf.NetworkMode() == sandbox.NetworkAllowlist {
		if pr.Via, err = upstreamproxy.FromEnviron(env); err != nil {
			return err
		}
	}
	return nil
}

// placeLogin puts a file login where this launch's credential mode wants
// it before any sandbox of the launch exists (ADR 0039): kept outside with
// one name, which no sandbox sees, with an empty file at Claude Code's path
// for the sandbox's cover, or back where Claude Code reads it when it
// enters.
func (pr *Prepared) placeLogin() error {
	if pr.Conf.CredentialMode() == sandbox.CredentialsInside {
		return authproxy.Release(pr.Launch.Home)
	}
	if pr.Credential == nil {
		return nil
	}
	cred := filepath.Join(pr.Launch.Home, layout.CredentialsFile)
	_, missing := os.Lstat(cred)
	if err := pr.Credential.Keep(); err != nil {
		return err
	}
	if _, now := os.Lstat(cred); missing == nil || now != nil {
		return nil
	}
	// Keep made the file the sandbox covers: the plan must see it.
	var err error
	pr.Resolved, err = sandbox.Resolve(pr.Conf, pr.Session, pr.facts())
	return err
}

// Checked is a launch that passed every check made before anything
// changes, and the processes its sandbox may start.
type Checked struct {
	*Prepared
	budget budget
	conns  connBounds
}

// Check settles a launch and makes its other checks before anything
// changes: the processes the sandbox may start here, and that what the
// launch creates in the home when it is missing can be created. The launch
// and `claude-sandbox doctor` both run it, so doctor says ok only to a
// launch that gets as far as starting bwrap. It assembles no plan: the
// launch does that once, when every fact the plan holds is settled.
func Check(p host.Paths, args []string, env launchenv.Given) (*Checked, error) {
	pr, err := settle(p, args, env)
	if err != nil {
		return nil, err
	}
	facts, err := readTaskFacts("/proc")
	if err != nil {
		return nil, fmt.Errorf("cannot read the limits on processes: %w", err)
	}
	c := &Checked{Prepared: pr}
	if c.budget, err = planBudget(facts); err != nil {
		return nil, err
	}
	if c.conns, err = launcherBounds(); err != nil {
		return nil, err
	}
	for _, part := range homeParts(pr.Launch.Home, pr.Resolved.Made()) {
		if err := creatable(part); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// launch is one launch, in order: every check made before anything
// changes (Check), the login moved where no sandbox sees it, the git
// store's mount points, what only a running
// service or listener tells and the one plan (assemble), the home, the
// terminal, the services, and the sandbox supervised until Claude ends.
func launch(p host.Paths, args []string, env launchenv.Given, stderr io.Writer, r role) (int, error) {
	c, err := Check(p, args, env) // refuses before anything changes
	if err != nil {
		return 0, err
	}
	pr, budget := c.Prepared, c.budget
	if err := pr.placeLogin(); err != nil {
		return 0, err
	}
	if err := pr.makeMountPoints(); err != nil {
		return 0, err
	}
	bg, authL, err := pr.assemble(r, env, stderr)
	if err != nil {
		return 0, err
	}
	defer bg.close()
	if authL != nil {
		defer authL.Close()
	}
	// Made while the launch goes on, and waited for before bwrap starts.
	reserved := make(chan struct{})
	go func() {
		reserveThreads(launcherThreads())
		close(reserved)
	}()
	if err := prepareHome(pr.Launch.Home, pr.Plan); err != nil {
		return 0, err
	}
	if pr.Credential == nil && pr.Conf.CredentialMode() == sandbox.CredentialsProxy && !sandbox.VersionOnly(args) {
		fmt.Fprintf(stderr, "claude-sandbox: no Claude login found; log in inside this session, and from the next launch on the login stays outside the sandbox\n")
	}
	term, err := openTerminal()
	if err != nil {
		return 0, err
	}
	defer term.close()
	stderr = term.messages(stderr)
	svc, err := newServices(pr, authL, c.conns, stderr)
	if err != nil {
		return 0, err
	}
	defer svc.close()
	if err := bg.publishGateway(pr.Running.gateway); err != nil {
		return 0, err
	}
	<-reserved
	code, err := supervise(pr.Bwrap, pr.Plan, svc, budget, term, stderr)
	if svc.auth != nil {
		if rerr := svc.auth.LastError(); rerr != nil {
			// Claude saw only the API's 401; the cause is outside.
			fmt.Fprintf(stderr, "claude-sandbox: the Claude login could not be refreshed: %v\n", rerr)
		}
	}
	return code, err
}

// assemble settles what the plan holds that only a running service or
// listener tells (settleRunning), then assembles the launch's one plan
// from it, whose held files must each have one name. The launch owns
// what it returns: the background launch (nil for a plain one) and the
// credential proxy's listener (nil but in open mode).
func (pr *Prepared) assemble(r role, env launchenv.Given, stderr io.Writer) (bg *bgLaunch, authL net.Listener, err error) {
	defer func() {
		if err != nil {
			bg.close()
			if authL != nil {
				authL.Close()
			}
			bg, authL = nil, nil
		}
	}()
	var run running
	if run, bg, authL, err = pr.settleRunning(r, env, stderr); err != nil {
		return bg, authL, err
	}
	pr.Running = run
	pr.Plan = sandbox.Assemble(pr.Conf, pr.Session, pr.facts(), pr.Resolved)
	if err = heldHaveOneName(pr.Plan); err != nil {
		return bg, authL, err
	}
	if bg != nil {
		err = bg.dirs.hiddenInside(pr.Plan)
	}
	return bg, authL, err
}

// supervise starts bwrap with an empty environment and its inputs on file
// descriptors, confines the sandbox to its budget before anything runs in
// it, waits for it, and returns Claude's exit status. With term, the
// sandbox's terminal is the launcher's pty, which supervise relays and hands
// back to the user's shell whenever the job stops.
func supervise(bwrap string, plan *sandbox.Plan, svc *services, b budget, term *terminal, stderr io.Writer) (int, error) {
	// bwrap's --die-with-parent follows the thread that forks it: keep that
	// thread for this goroutine until bwrap ends, so no other goroutine that
	// locks a thread and exits (the warden's workers) can take it down.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	in, err := newBwrapInputs(plan, svc.child)
	if err != nil {
		return 0, err
	}
	defer in.close()
	stdio := [3]*os.File{os.Stdin, os.Stdout, os.Stderr}
	if term != nil {
		stdio = term.stdio()
	}
	cmd := &exec.Cmd{
		Path:       bwrap,
		Args:       append([]string{"bwrap", "--args", fmt.Sprint(sandbox.ArgsFD), "--block-fd", fmt.Sprint(sandbox.BlockFD), "--"}, plan.Command...),
		Env:        []string{}, // nothing for /proc/1/environ to show
		Stdin:      stdio[0],
		Stdout:     stdio[1],
		Stderr:     stdio[2],
		ExtraFiles: in.files,
	}
	cmd.SysProcAttr = sandbox.PrivateMounts()
	j := &job{term: term, own: term != nil || hasControllingTerminal()}
	if j.own {
		// No process of the sandbox has the user's terminal as its
		// controlling terminal: nothing inside can open it as /dev/tty.
		cmd.SysProcAttr.Setsid = true
	}
	// The launcher catches ^C and ^\ so that it outlives them. They are
	// caught, not ignored, because an ignored signal stays ignored across
	// exec and Claude's children must still be interruptible. SIGTERM and
	// SIGHUP sent to the launcher alone are passed on to bwrap.
	j.sigs = make(chan os.Signal, 8)
	signal.Notify(j.sigs, os.Interrupt, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP)
	j.notify()
	defer signal.Stop(j.sigs)
	err = withUserCeiling(b.userCeiling, cmd.Start)
	in.closeChildEnds()
	if err != nil {
		return 0, fmt.Errorf("the sandbox could not be set up: %s cannot start in a mount namespace of its own (%w). %s", bwrap, err, doctor.Diagnose())
	}
	j.bwrap = cmd.Process
	if term != nil {
		term.started()
		// Every way out passes here once bwrap has ended: the output it
		// left, then the user's terminal modes.
		defer term.finish()
	}
	status := newStatusReader(in.statusR)
	if err := release(cmd, status, in.blockW, b); err != nil {
		return 0, err
	}
	if err := svc.start(plan.Listen, term != nil); err != nil {
		// init waits for the launcher's answer before it runs Claude:
		// without it, it ends the sandbox itself.
		svc.close()
		_ = cmd.Wait()
		if _, ran := status.rest()["exit-code"]; !ran {
			return 0, fmt.Errorf("the sandbox could not be set up (bwrap's message is above). %s", doctor.Diagnose())
		}
		return 0, fmt.Errorf("the proxies or the warden could not start, so Claude did not start: %w", err)
	}
	var reports <-chan []byte
	if term != nil {
		j.init = svc.conn
		reports = readReports(svc.conn)
		if err := term.takeKeys(); err != nil {
			fmt.Fprintf(stderr, "claude-sandbox: %v; keys typed will not reach Claude\n", err)
		}
	}
	return j.wait(cmd, status, reports)
}

// bwrapInputs are the descriptors bwrap inherits, and the launcher's ends
// of the status and block pipes.
type bwrapInputs struct {
	files           []*os.File // files[i] is descriptor i+3 in bwrap
	statusR, blockW *os.File
}

// newBwrapInputs makes bwrap's inputs for plan: its options, the seccomp
// filter and the content of each file it makes in memory files, the
// status and block pipes, and init's end of the control socket. A
// descriptor the plan does not read stays closed in bwrap.
func newBwrapInputs(plan *sandbox.Plan, control *os.File) (*bwrapInputs, error) {
	in := &bwrapInputs{files: make([]*os.File, sandbox.InheritedFDs)}
	put := func(fd int, f *os.File) { in.files[fd-3] = f }
	put(sandbox.ControlFD, control)
	args, err := memfd("claude-sandbox-args", []byte(strings.Join(plan.BwrapArgs(), "\x00")+"\x00"))
	if err != nil {
		return nil, err
	}
	put(sandbox.ArgsFD, args)
	filter, err := memfd("claude-sandbox-seccomp", sandbox.SeccompProgram())
	if err != nil {
		in.close()
		return nil, err
	}
	put(sandbox.SeccompFD, filter)
	for fd, data := range plan.FileContents() {
		f, err := memfd("claude-sandbox-file", data)
		if err != nil {
			in.close()
			return nil, err
		}
		put(fd, f)
	}
	var statusW, blockR *os.File
	if in.statusR, statusW, err = os.Pipe(); err == nil {
		put(sandbox.StatusFD, statusW)
		if blockR, in.blockW, err = os.Pipe(); err == nil {
			put(sandbox.BlockFD, blockR)
		}
	}
	if err != nil {
		in.closeChildEnds()
		in.close()
		return nil, err
	}
	return in, nil
}

// closeChildEnds closes the pipes' ends only bwrap keeps, once it started.
func (in *bwrapInputs) closeChildEnds() {
	for _, fd := range []int{sandbox.StatusFD, sandbox.BlockFD} {
		if f := in.files[fd-3]; f != nil {
			f.Close()
		}
	}
}

// close closes the launcher's descriptors; the control socket is the
// services'.
func (in *bwrapInputs) close() {
	for _, f := range []*os.File{in.files[sandbox.ArgsFD-3], in.files[sandbox.SeccompFD-3], in.files[sandbox.GitConfigFD-3], in.files[sandbox.ForgeCAFD-3], in.statusR, in.blockW} {
		if f != nil {
			f.Close()
		}
	}
}

// release confines the sandbox's first process to its budget, then lets
// it start: nothing has run inside before. When bwrap made no process, the
// launch goes on to find out why.
func release(cmd *exec.Cmd, status *statusReader, blockW *os.File, b budget) error {
	defer blockW.Close()
	pid, ok := status.childPID()
	if !ok {
		return nil
	}
	if err := confine(pid, b); err != nil {
		// Nothing has run inside: end it before it can.
		gone := ended(pid, err)
		_ = unix.Kill(pid, unix.SIGKILL)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if gone {
			return fmt.Errorf("the sandbox could not be set up (bwrap's message is above). %s", doctor.Diagnose())
		}
		return err
	}
	if _, err := blockW.Write([]byte{'y'}); err != nil {
		return fmt.Errorf("cannot let the sandbox start: %w", err)
	}
	return nil
}

// wait relays signals and init's reports on the job until bwrap ends, and
// returns Claude's exit status.
func (j *job) wait(cmd *exec.Cmd, status *statusReader, reports <-chan []byte) (int, error) {
	final := make(chan map[string]any, 1)
	go func() { final <- status.rest() }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var forwarded syscall.Signal
	var lost error
	for {
		select {
		case sig := <-j.sigs:
			if sig == syscall.SIGTERM || sig == syscall.SIGHUP {
				forwarded = sig.(syscall.Signal)
				_ = cmd.Process.Signal(sig)
				continue
			}
			if passed := j.signal(sig.(syscall.Signal)); passed != 0 {
				forwarded = passed
			}
		case msg, ok := <-reports:
			if !j.report(msg, ok) && lost == nil {
				// init is gone but bwrap is not: nothing would tell the
				// launcher when Claude stops.
				lost = errors.New("the sandbox's init ended before Claude did; the session was ended")
				_ = cmd.Process.Kill()
			}
			if !ok {
				reports = nil
			}
		case <-done:
			_, ran := (<-final)["exit-code"]
			return exitStatus(cmd.ProcessState.Sys().(syscall.WaitStatus), ran, forwarded, lost)
		}
	}
}

// exitStatus is the launch's exit status once bwrap ended with ws: ran
// says Claude's command ran, forwarded is the last signal the launcher
// passed on, lost why it ended the session itself.
func exitStatus(ws syscall.WaitStatus, ran bool, forwarded syscall.Signal, lost error) (int, error) {
	switch {
	case lost != nil && forwarded == 0:
		return 0, lost
	case ws.Signaled():
		return 128 + int(ws.Signal()), nil
	case forwarded != 0 && !ran:
		return 128 + int(forwarded), nil
	case !ran:
		return 0, fmt.Errorf("the sandbox could not be set up (bwrap's message is above). %s", doctor.Diagnose())
	}
	return ws.ExitStatus(), nil
}

// statusReader reads bwrap's --json-status-fd records: "child-pid" comes
// as soon as bwrap has made the sandbox's first process, "exit-code" only
// if the sandboxed command itself ran and ended.
type statusReader struct {
	sc      *bufio.Scanner
	records map[string]any
}

func newStatusReader(r io.Reader) *statusReader {
	return &statusReader{sc: bufio.NewScanner(r), records: map[string]any{}}
}

// next reads one record; false at the end.
func (s *statusReader) next() bool {
	if !s.sc.Scan() {
		return false
	}
	var m map[string]any
	if json.Unmarshal(s.sc.Bytes(), &m) == nil {
		for k, v := range m {
			s.records[k] = v
		}
	}
	return true
}

// childPID reads up to the record naming the sandbox's first process; false
// if bwrap ended before it made one.
func (s *statusReader) childPID() (int, bool) {
	for {
		if pid, ok := s.records["child-pid"].(float64); ok && pid > 0 {
			return int(pid), true
		}
		if !s.next() {
			return 0, false
		}
	}
}

// rest reads to the end and returns every record seen.
func (s *statusReader) rest() map[string]any {
	for s.next() {
	}
	return s.records
}

func memfd(name string, data []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// closeInherited marks every descriptor above stderr close-on-exec, so no
// descriptor the caller leaked (a socket, a secret file) reaches the sandbox.
func closeInherited() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		var fd int
		if _, err := fmt.Sscan(e.Name(), &fd); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// A homePart is something the launch creates in the home when it is
// missing: a directory, an empty file, or a file holding content.
type homePart struct {
	path    string
	dir     bool
	content string
	mode    os.FileMode // of a file; of a directory, when not 0o700
	why     string      // for the error, after the path
}

// homeParts are what the launch creates in the home, so the sandbox's binds
// have a source: the directories and settings Claude Code would create
// itself on first use, the files the user's settings name as commands but
// that are missing (created empty, so the session cannot write them), and
// the directories only sandboxes see, and where Claude Code's own state is
// bound from them.
func homeParts(home string, made sandbox.Made) []homePart {
	parts := []homePart{{path: filepath.Join(home, ".claude"), dir: true}, {path: filepath.Join(home, ".claude/ide"), dir: true},
		{path: filepath.Join(home, layout.KeptLoginDir), dir: true}}
	for _, rel := range sandbox.ClaudeReadOnly() {
		part := homePart{path: filepath.Join(home, rel), dir: true}
		if sandbox.ClaudeReadOnlyFile(rel) {
			part = homePart{path: part.path, content: "{}\n", mode: 0o600}
		}
		parts = append(parts, part)
	}
	for _, p := range made.CommandFiles {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			parts = append(parts, homePart{path: dir, dir: true, why: ", where the user's Claude settings pick a command's program, to hold it read-only"})
			continue
		}
		parts = append(parts, homePart{path: filepath.Dir(p), dir: true},
			homePart{path: p, mode: 0o644, why: ", which the user's Claude settings name as a command, to hold it read-only"})
	}
	parts = append(parts, homePart{path: filepath.Join(home, ".claude.json"), content: "{}\n", mode: 0o600})
	for _, rel := range sandbox.ClaudeOwnState() {
		parts = append(parts, homePart{path: filepath.Join(home, rel), dir: true})
	}
	for _, dir := range made.OwnDirs {
		parts = append(parts, homePart{path: dir, dir: true, why: " (seen only by sandboxes)"})
	}
	for _, dir := range made.MountPoints {
		parts = append(parts, mountPoint(dir))
	}
	return parts
}

// creatable checks that part exists, or that the user can create it: its
// nearest existing ancestor is a directory the user may write.
func creatable(part homePart) error {
	dir := part.path
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			var why error
			switch {
			case dir == part.path && part.dir && !fi.IsDir(), dir != part.path && !fi.IsDir():
				why = unix.ENOTDIR
			case dir == part.path: // a file there is kept as it is
				return nil
			case unix.Access(dir, unix.W_OK|unix.X_OK) == nil:
				return nil
			default:
				why = unix.EACCES
			}
			return fmt.Errorf("cannot create %s%s: %w", part.path, part.why, why)
		}
		if !errors.Is(err, fs.ErrNotExist) || dir == "/" {
			return fmt.Errorf("cannot create %s%s: %w", part.path, part.why, cause(err))
		}
		dir = filepath.Dir(dir)
	}
}

// cause is the system's error below a path error, or err.
func cause(err error) error {
	if inner := errors.Unwrap(err); inner != nil {
		return inner
	}
	return err
}

// prepareHome creates the home's parts (homeParts) that are missing.
func prepareHome(home string, plan *sandbox.Plan) error {
	for _, part := range homeParts(home, plan.Made) {
		if part.dir {
			if err := os.MkdirAll(part.path, cmp.Or(part.mode, 0o700)); err != nil {
				return fmt.Errorf("cannot create %s%s: %w", part.path, part.why, cause(err))
			}
			continue
		}
		if err := writeNew(part.path, part.content, part.mode); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("cannot create %s%s: %w", part.path, part.why, cause(err))
		}
	}
	for _, p := range plan.StorePoints {
		if err := storePoint(p); err != nil {
			return fmt.Errorf("cannot make %s, where the workspace's git store has something made outside bound back (ADR 0034): %w", p, cause(err))
		}
	}
	for _, c := range plan.Copies {
		if err := copyFile(c.From, c.To); err != nil {
			return fmt.Errorf("cannot copy %s into the workspace's git store (ADR 0034): %w", c.From, cause(err))
		}
	}
	wireStatusLine(filepath.Join(home, ".claude/settings.json"))
	return nil
}

// mountPoint is the part the launch makes for a mount point of the git
// store in the workspace, as git and Claude Code would make it: the
// user's umask decides its mode.
func mountPoint(dir string) homePart {
	return homePart{path: dir, dir: true, mode: 0o777, why: ", where the sandbox sees the workspace's git store (ADR 0034)"}
}

// makeMountPoints makes the git store's mount points in the workspace that
// are missing. When it made one, it resolves again: the plan reads the
// workspace as bwrap will find it, the new directories on the way pinned
// as any others, and verify, planning again inside, finds the same.
func (pr *Prepared) makeMountPoints() error {
	made := false
	for _, dir := range pr.Resolved.Made().MountPoints {
		if _, err := os.Lstat(dir); err == nil {
			continue
		}
		part := mountPoint(dir)
		if err := os.MkdirAll(dir, part.mode); err != nil {
			return fmt.Errorf("cannot create %s%s: %w", dir, part.why, cause(err))
		}
		made = true
	}
	if !made {
		return nil
	}
	var err error
	pr.Resolved, err = sandbox.Resolve(pr.Conf, pr.Session, pr.facts())
	return err
}

// storePoint makes p a directory of its own in the git store: a link or a
// file a session left under that name is removed (bwrap would follow a
// link to its mount point), a directory kept.
func storePoint(p string) error {
	fi, err := os.Lstat(p)
	if err == nil && fi.IsDir() {
		return nil
	}
	if err == nil {
		if err := os.Remove(p); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Mkdir(p, 0o700)
}

// copyFile replaces to with a copy of from, a regular file (not a link)
// of at most maxCopiedFile bytes, readable and writable by the user only
// (copiedFileMode), as atomicfile replaces a file: a sandbox already
// running never reads half a copy, a launch that ends at any point leaves
// the old copy or the new, and a link a session left at to is replaced,
// never written through.
func copyFile(from, to string) error {
	data, err := plainfile.Read(from, plainfile.Limits{Max: maxCopiedFile, Owner: plainfile.AnyOwner})
	if err != nil {
		return err
	}
	return atomicfile.Write(to, data, copiedFileMode)
}

// copiedFileMode is a copy's mode, whatever the umask: a repository's
// config can hold credentials (a remote's URL with a token), and the
// sandbox writes its own copy.
const copiedFileMode = 0o600

// maxCopiedFile bounds a repository's config the launch copies into the git
// store: git's are kilobytes, and the session may have written this one.
const maxCopiedFile = 4 << 20

// writeNew creates path with content, failing if it exists.
func writeNew(path, content string, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
