package launcher

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/egress"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/warden"
	"golang.org/x/sys/unix"
)

// DefaultUpstream is Claude Code's API when the caller names none.
const DefaultUpstream = "https://api.anthropic.com"

// services are what the launcher runs beside one sandbox: the proxies and
// the warden.
type services struct {
	egress  *egress.Proxy     // nil in open mode
	auth    *authproxy.Server // nil when the login is not proxied
	authL   net.Listener      // open mode: the credential proxy's listener, which the launch owns
	control *os.File          // the launcher's end of sandbox.ControlFD
	child   *os.File          // the end bwrap passes to init
	conn    *net.UnixConn     // control as a connection, once bwrap runs
	rules   warden.Rules      // what the warden refuses, but for Private, which init reports
	refused *egress.Log       // where the warden's refusals are recorded
}

// listenCredentialProxy opens, in open mode, the credential proxy's
// listener on the container's loopback, and settles its address in the
// launch's facts before the plan is assembled. In allowlist mode the
// proxy listens inside, at a fixed address (sandbox.Listener); a client
// of the background service uses the service's (adoptGateway).
func listenCredentialProxy(pr *Prepared) (net.Listener, error) {
	if pr.Credential == nil || pr.SharedGateway || pr.Conf.NetworkMode() == sandbox.NetworkAllowlist {
		return nil, nil
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the credential proxy cannot listen on loopback: %w", err)
	}
	pr.Launch.AuthAddr = l.Addr().String()
	return l, nil
}

// newServices prepares what a plan needs: in open mode the credential
// proxy serves authL; in allowlist mode the listeners arrive from init, as
// does the warden's listener in both.
func newServices(pr *Prepared, authL net.Listener, conns connBounds, stderr io.Writer) (*services, error) {
	s := &services{authL: authL}
	if pr.Credential != nil && !pr.SharedGateway {
		s.auth = &authproxy.Server{Upstream: pr.Upstream, Credential: pr.Credential, Placeholder: pr.Launch.AuthToken, TokenURL: authproxy.TokenURL,
			Dial: pr.Via.Dialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext), MaxConns: conns.auth}
	}
	if pr.Plan.Egress != nil {
		s.egress = &egress.Proxy{Policy: *pr.Plan.Egress, Upstream: pr.Via, MaxConns: conns.egress, Log: &egress.Log{
			Path: filepath.Join(pr.Launch.Home, layout.DenialsLog), Workspace: pr.Plan.Workspace, Errors: stderr,
		}}
	}
	// The plan's rules on names reach the warden as the one value it
	// states them in; what init reports of the sandbox comes later.
	s.rules = warden.Rules{Rules: pr.Plan.NameRules, Siblings: pr.Siblings, Workspace: pr.Plan.Workspace}
	s.refused = &egress.Log{Path: filepath.Join(pr.Launch.Home, layout.DenialsLog), Workspace: pr.Plan.Workspace, Errors: stderr}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	s.control, s.child = os.NewFile(uintptr(fds[0]), "control"), os.NewFile(uintptr(fds[1]), "control-child")
	return s, nil
}

// start serves the proxies and the warden once bwrap runs. It receives
// init's listening sockets in plan order (allowlist mode), then the
// warden's listener, serves them, and only then lets init run Claude (as
// the job of the launcher's pty when terminal is set). An error means
// Claude must not start.
func (s *services) start(listen []sandbox.Listener, terminal bool) error {
	if s.authL != nil {
		go s.auth.Serve(s.authL)
	}
	s.child.Close()
	c, err := net.FileConn(s.control)
	if err != nil {
		return err
	}
	conn := c.(*net.UnixConn)
	s.conn = conn
	for _, want := range listen {
		_, fd, err := receiveFD(conn)
		if err != nil {
			return fmt.Errorf("the sandbox did not hand over its %s socket (%s): %w", want.Addr, want.Proxy, err)
		}
		f := os.NewFile(uintptr(fd), "listener")
		l, err := net.FileListener(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("the sandbox's %s socket (%s): %w", want.Addr, want.Proxy, err)
		}
		switch want.Proxy {
		case sandbox.EgressProxy:
			go s.egress.Serve(l)
		case sandbox.CredentialProxy:
			go s.auth.Serve(l)
		default:
			l.Close()
			return fmt.Errorf("the plan has a listener for %q, which the launcher does not serve", want.Proxy)
		}
	}
	if err := s.startWarden(conn); err != nil {
		return err
	}
	answer := byte(answerExec)
	if terminal {
		answer = answerTerminal
	}
	if _, err := conn.Write([]byte{answer}); err != nil {
		return fmt.Errorf("cannot tell the sandbox the proxies run: %w", err)
	}
	return nil
}

// startWarden receives the warden's listener and the sandbox's own file
// systems from init, and serves it.
func (s *services) startWarden(conn *net.UnixConn) error {
	msg, fds, err := receiveFDs(conn, 2)
	if err != nil {
		return fmt.Errorf("the sandbox did not hand over the warden's listener and socket helper: %w", err)
	}
	fd := fds[0]
	helper := os.NewFile(uintptr(fds[1]), "socket-helper")
	if err := s.readWardenMessage(msg); err != nil {
		unix.Close(fd)
		helper.Close()
		return err
	}
	s.rules.Helper = helper
	w, err := warden.New(fd, s.rules)
	if err != nil {
		unix.Close(fd)
		helper.Close()
		return err
	}
	w.Refused = s.refused.RecordPath
	go w.Serve()
	return nil
}

// readWardenMessage reads what init says with the warden's listener:
// "warden SCOPE locked=DEV,... DEV...", the scope on abstract sockets, the
// file systems the kernel's lock grants, and the sandbox's own.
func (s *services) readWardenMessage(msg string) error {
	fields := strings.Fields(msg)
	if len(fields) < 3 || fields[0] != "warden" || (fields[1] != scopeOn && fields[1] != scopeOff) || !strings.HasPrefix(fields[2], lockedField) {
		return fmt.Errorf("the sandbox sent %q where the warden's listener belongs", msg)
	}
	s.rules.AbstractScoped = fields[1] == scopeOn
	parse := func(f string) (uint64, error) {
		dev, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("the sandbox sent %q as a device number", f)
		}
		return dev, nil
	}
	for _, f := range fields[3:] {
		dev, err := parse(f)
		if err != nil {
			return err
		}
		s.rules.Private = append(s.rules.Private, dev)
	}
	if list := strings.TrimPrefix(fields[2], lockedField); list != "" {
		for _, f := range strings.Split(list, ",") {
			dev, err := parse(f)
			if err != nil {
				return err
			}
			if !slices.Contains(s.rules.Private, dev) {
				return fmt.Errorf("the sandbox's lock grants device %d, not one of its own file systems", dev)
			}
			s.rules.Locked = append(s.rules.Locked, dev)
		}
	}
	return nil
}

// close drops the launcher's ends; the listeners die with the process.
func (s *services) close() {
	if s.conn != nil {
		s.conn.Close()
	}
	for _, f := range []*os.File{s.control, s.child} {
		if f != nil {
			f.Close()
		}
	}
}

// receiveFD reads one message of init's and the one descriptor it carries.
func receiveFD(conn *net.UnixConn) (string, int, error) {
	msg, fds, err := receiveFDs(conn, 1)
	if err != nil {
		return "", -1, err
	}
	return msg, fds[0], nil
}

// receiveFDs reads one message of init's and the n descriptors it carries.
func receiveFDs(conn *net.UnixConn, n int) (string, []int, error) {
	buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(4*n))
	size, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return "", nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return "", nil, errors.New("no descriptor arrived")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != n {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return "", nil, fmt.Errorf("%d descriptors arrived, not %d", len(fds), n)
	}
	for _, fd := range fds {
		unix.CloseOnExec(fd)
	}
	return string(buf[:size]), fds, nil
}

// upstream is the API the credential proxy forwards to: the caller's
// ANTHROPIC_BASE_URL, else Anthropic's. Plain http is accepted only to a
// loopback address, where no network carries the login in the clear.
func upstream(env launchenv.Env) (*url.URL, error) {
	u, err := env.BaseURL()
	if err != nil {
		return nil, err
	}
	if u == nil {
		return url.Parse(DefaultUpstream)
	}
	if launchenv.Cleartext(u) {
		return nil, fmt.Errorf("%s=%q is plain http to another machine: the credential proxy would send your login unencrypted; use https", launchenv.BaseURLVar, env.Get(launchenv.BaseURLVar))
	}
	return u, nil
}
