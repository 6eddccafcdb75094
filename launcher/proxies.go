package launcher

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/egress"
	"golang.org/x/sys/unix"
)

// DenialsLog is where the egress proxy records what it refused, relative to
// the user's home: outside every path the sandbox can see.
const DenialsLog = ".cache/claude-sandbox/denials.log"

// DefaultUpstream is Claude Code's API when the caller names none.
const DefaultUpstream = "https://api.anthropic.com"

// services are the proxies the launcher runs beside one sandbox.
type services struct {
	egress *egress.Proxy     // nil in open mode
	auth   *authproxy.Server // nil when the login is not proxied
	authL  net.Listener      // open mode: the credential proxy's listener
	netFD  *os.File          // allowlist mode: the launcher's end of sandbox.NetFD
	child  *os.File          // allowlist mode: the end bwrap passes to net-init
	conn   *net.UnixConn     // allowlist mode: netFD as a connection, once bwrap runs
}

// newServices prepares the proxies a plan needs. In open mode the
// credential proxy listens now on the container's loopback (its address is
// part of the plan); in allowlist mode the listeners arrive from net-init.
func newServices(pr *Prepared, stderr io.Writer) (*services, error) {
	s := &services{}
	if pr.Credential != nil {
		s.auth = &authproxy.Server{Upstream: pr.Upstream, Credential: pr.Credential, Placeholder: pr.Launch.AuthToken, TokenURL: authproxy.TokenURL}
	}
	if pr.Plan.Egress != nil {
		s.egress = &egress.Proxy{Policy: *pr.Plan.Egress, Log: &egress.Log{
			Path: filepath.Join(pr.Launch.Home, DenialsLog), Workspace: pr.Plan.Workspace, Errors: stderr,
		}}
	}
	if len(pr.Plan.Listen) > 0 {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("socketpair: %v", err)
		}
		s.netFD, s.child = os.NewFile(uintptr(fds[0]), "net"), os.NewFile(uintptr(fds[1]), "net-child")
	} else if s.auth != nil {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("the credential proxy cannot listen on loopback: %v", err)
		}
		s.authL = l
		pr.Launch.AuthAddr = l.Addr().String()
	}
	return s, nil
}

// start serves the proxies once bwrap runs. In allowlist mode it receives
// net-init's listening sockets in plan order, serves them, and only then
// lets net-init exec Claude. An error means Claude must not start.
func (s *services) start(listen []string) error {
	if s.authL != nil {
		go s.auth.Serve(s.authL)
	}
	if s.netFD == nil {
		return nil
	}
	s.child.Close()
	c, err := net.FileConn(s.netFD)
	if err != nil {
		return err
	}
	conn := c.(*net.UnixConn)
	s.conn = conn
	for i, addr := range listen {
		l, err := receiveListener(conn)
		if err != nil {
			return fmt.Errorf("the sandbox did not hand over its %s socket: %v", addr, err)
		}
		switch i {
		case 0:
			go s.egress.Serve(l)
		case 1:
			go s.auth.Serve(l)
		}
	}
	if _, err := conn.Write([]byte{'y'}); err != nil {
		return fmt.Errorf("cannot tell the sandbox the proxies run: %v", err)
	}
	return nil
}

// close drops the launcher's ends; the listeners die with the process.
func (s *services) close() {
	if s.conn != nil {
		s.conn.Close()
	}
	for _, f := range []*os.File{s.netFD, s.child} {
		if f != nil {
			f.Close()
		}
	}
	if s.authL != nil {
		s.authL.Close()
	}
}

func receiveListener(conn *net.UnixConn) (net.Listener, error) {
	buf, oob := make([]byte, 64), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("no descriptor arrived")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, errors.New("no descriptor arrived")
	}
	f := os.NewFile(uintptr(fds[0]), "listener")
	defer f.Close()
	return net.FileListener(f)
}

// upstream is the API the credential proxy forwards to: the caller's
// ANTHROPIC_BASE_URL, else Anthropic's. Plain http is accepted only to a
// loopback address, where no network carries the login in the clear.
func upstream(environ []string) (*url.URL, error) {
	raw := DefaultUpstream
	if v, ok := lookupEnv(environ, "ANTHROPIC_BASE_URL"); ok && v != "" {
		raw = v
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, fmt.Errorf("ANTHROPIC_BASE_URL=%q is not an http(s) URL", raw)
	}
	if u.Scheme == "http" {
		if a, err := netip.ParseAddr(u.Hostname()); err != nil || !a.IsLoopback() {
			return nil, fmt.Errorf("ANTHROPIC_BASE_URL=%q is plain http to another machine: the credential proxy would send your login unencrypted; use https", raw)
		}
	}
	return u, nil
}

func lookupEnv(environ []string, name string) (string, bool) {
	for _, kv := range environ {
		if n, v, ok := strings.Cut(kv, "="); ok && n == name {
			return v, true
		}
	}
	return "", false
}
