package verify

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/envlist"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/mountinfo"
	"github.com/claude-sandbox/claude-sandbox/internal/procstatus"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// facts are what the checks look at, gathered once. A fact that could not be
// gathered carries its error, and every check that needs it fails with it.
type facts struct {
	paths   layout.Layout
	environ []string

	fds    []descriptor // open when verify started
	fdsErr error

	status    map[string]string // /proc/self/status
	statusErr error

	procs    []process
	procsErr error

	firstPID    int      // the process bwrap's pid 1 started
	startEnv    []string // the environment bwrap gave it: the launcher's, before any shell changed it
	startEnvErr error

	mounts    []mountinfo.Mount // the visible ones
	mountsErr error

	conf    *sandbox.Conf
	confErr error

	launch    *launchView // the plan of this sandbox's launch, recomputed here
	launchErr error

	interfaces    []string // the network interfaces of /proc/net/dev
	interfacesErr error

	nameservers    []string // /etc/resolv.conf's, as host:53
	nameserversErr error

	dial dialFunc // net.DialTimeout; the tests answer in its place
}

// dialFunc connects as net.DialTimeout does.
type dialFunc func(network, address string, timeout time.Duration) (net.Conn, error)

// launchView is the launch as the launcher saw it: the facts and the plan
// recomputed with the launcher's own code, from the conf, the passwd
// database, the launch's working directory and its environment.
type launchView struct {
	launch sandbox.Launch
	plan   *sandbox.Plan
}

func gather(p layout.Layout, environ []string, fds []descriptor, fdsErr error) *facts {
	f := &facts{paths: p, environ: environ, fds: fds, fdsErr: fdsErr}
	f.status, f.statusErr = procstatus.Read("self")
	f.procs, f.procsErr = processes()
	f.firstPID, f.startEnv, f.startEnvErr = startEnvironment(f.procs, f.procsErr)
	f.mounts, f.mountsErr = visibleMounts()
	f.conf, f.confErr = host.LoadConf(p.Conf)
	f.launch, f.launchErr = f.recomputeLaunch()
	if f.launchErr != nil {
		f.launchErr = fmt.Errorf("cannot recompute this sandbox's plan: %w", f.launchErr)
	}
	f.interfaces, f.interfacesErr = readInterfaces()
	f.nameservers, f.nameserversErr = readNameservers()
	f.dial = net.DialTimeout
	return f
}

// startEnvironment finds the sandbox's first process and the environment
// bwrap gave it.
func startEnvironment(procs []process, procsErr error) (int, []string, error) {
	if procsErr != nil {
		return 0, nil, procsErr
	}
	first, err := firstProcess(procs)
	if err != nil {
		return 0, nil, err
	}
	env, err := readEnviron(first)
	return first, env, err
}

// recomputeLaunch runs the launcher's planning again. The working
// directory is the launch's --chdir, which bwrap gives as PWD; the
// environment is the one bwrap gave the first process. CLAUDE_SANDBOX_*
// never enter the sandbox, so a session's own protect paths are unknown here.
// The session token and the credential proxy's address are the launch's own,
// as the environment shows them, so the plan hides the login as it did.
func (f *facts) recomputeLaunch() (*launchView, error) {
	if err := firstError(f.confErr, f.startEnvErr); err != nil {
		return nil, err
	}
	l, err := host.Facts(f.paths, launchenv.Read(f.startEnv), nil)
	if err != nil {
		return nil, err
	}
	f.sessionAuth(&l)
	f.background(&l)
	l.InSandbox = true
	// bwrap sets PWD to its --chdir; pid 1's own working directory is out
	// of reach where Landlock scopes the sandbox (pid 1 is outside its
	// domain).
	if l.Cwd = envlist.Map(f.startEnv)["PWD"]; l.Cwd == "" {
		return nil, errors.New("bwrap gave the first process no PWD")
	}
	plan, err := sandbox.Build(f.conf, sandbox.SessionEnv{}, l)
	if err != nil {
		return nil, err
	}
	return &launchView{launch: l, plan: plan}, nil
}

// sessionAuth gives the launch the session token and the credential
// proxy's address this sandbox started with, if any.
func (f *facts) sessionAuth(l *sandbox.Launch) {
	if token := f.sessionToken(); token != "" {
		l.AuthToken = token
		l.AuthAddr = strings.TrimPrefix(envlist.Map(f.startEnv)["ANTHROPIC_BASE_URL"], "http://")
	}
}

// background gives the launch the role of a background session's sandbox
// (ADR 0026), which its first process's environment names: the plan then
// has the service's shared socket directory and the inside wrapper, as the
// launcher's had. The directory's source outside is not visible inside,
// and no check reads it.
func (f *facts) background(l *sandbox.Launch) {
	switch envlist.Map(f.startEnv)[sandbox.BackgroundRoleVar] {
	case "service":
		l.Background = &sandbox.Background{UID: os.Getuid(), Service: true}
	case "client":
		l.Background = &sandbox.Background{UID: os.Getuid()}
	}
}

// sessionToken is the session token the launcher gave Claude in place of
// its login (credentials = proxy), or "" when it gave none. The conf must
// have loaded.
func (f *facts) sessionToken() string {
	token := envlist.Map(f.startEnv)["ANTHROPIC_AUTH_TOKEN"]
	if f.conf.CredentialMode() != sandbox.CredentialsProxy || !strings.HasPrefix(token, authproxy.PlaceholderPrefix) {
		return ""
	}
	return token
}

// descriptor is an open file descriptor and what it refers to.
type descriptor struct {
	fd     int
	target string
	// inherited is set when the descriptor lacks close-on-exec: one that
	// has it was opened in this process (the Go runtime opens its cgroup
	// files before main), since exec would have closed it otherwise.
	inherited bool
}

// openDescriptors lists this process's descriptors with raw system calls,
// so that nothing verify opens through Go's poller is among them.
func openDescriptors() ([]descriptor, error) {
	dir, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("/proc/self/fd: %w", err)
	}
	defer unix.Close(dir)
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.ReadDirent(dir, buf)
		if err != nil {
			return nil, fmt.Errorf("/proc/self/fd: %w", err)
		}
		if n == 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
	var out []descriptor
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd == dir {
			continue
		}
		target, _ := os.Readlink("/proc/self/fd/" + name)
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			return nil, fmt.Errorf("fcntl(%d, F_GETFD): %w", fd, err)
		}
		out = append(out, descriptor{fd, target, flags&unix.FD_CLOEXEC == 0})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].fd < out[j].fd })
	return out, nil
}

// process is one entry of /proc.
type process struct {
	pid, ppid int
	comm      string
	session   int      // the session's leader as this namespace numbers it: 0 when it leads from outside
	tty       uint64   // the controlling terminal's device number (major, minor as stat encodes them); 0 for none
	args      []string // the command line
}

func processes() ([]process, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // it exited meanwhile
		}
		p, err := parseStat(pid, string(b))
		if err != nil {
			return nil, err
		}
		if cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil {
			p.args = splitNul(cmd)
		}
		out = append(out, p)
	}
	return out, nil
}

// parseStat reads the command name, parent, session and controlling
// terminal of /proc/PID/stat, whose name field may itself hold spaces and
// parentheses.
func parseStat(pid int, stat string) (process, error) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return process{}, fmt.Errorf("/proc/%d/stat does not parse", pid)
	}
	rest := strings.Fields(stat[end+1:])
	if len(rest) < 5 {
		return process{}, fmt.Errorf("/proc/%d/stat does not parse", pid)
	}
	ppid, err1 := strconv.Atoi(rest[1])
	session, err2 := strconv.Atoi(rest[3])
	tty, err3 := strconv.ParseInt(rest[4], 10, 64)
	if err := firstError(err1, err2, err3); err != nil {
		return process{}, fmt.Errorf("/proc/%d/stat does not parse", pid)
	}
	return process{pid: pid, ppid: ppid, comm: stat[open+1 : end], session: session, tty: uint64(uint32(tty))}, nil
}

// firstProcess is Claude (or, in the tests, what the stand-in binary ran):
// the process bwrap's pid 1 started, or, in a session with a terminal,
// where that is the launcher's init running Claude as the job of the
// launcher's pty, init's child.
func firstProcess(procs []process) (int, error) {
	first := childOf(procs, 1)
	if first == 0 {
		return 0, errors.New("pid 1 has no child: this is not a sandbox bwrap started")
	}
	for _, p := range procs {
		if p.pid == first && len(p.args) > 1 && p.args[0] == layout.InitPath && p.args[1] == "init" {
			if job := childOf(procs, first); job != 0 {
				return job, nil
			}
		}
	}
	return first, nil
}

// childOf is the oldest child of pid (the lowest pid), or 0. The warden's
// socket helper, which init starts before Claude, is none.
func childOf(procs []process, pid int) int {
	child := 0
	for _, p := range procs {
		helper := len(p.args) > 2 && p.args[1] == "init" && p.args[2] == sandbox.SocketHelperArg
		if p.ppid == pid && !helper && (child == 0 || p.pid < child) {
			child = p.pid
		}
	}
	return child
}

func readEnviron(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return nil, err
	}
	return splitNul(b), nil
}

func splitNul(b []byte) []string {
	s := strings.TrimRight(string(b), "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}
