package launcher

import (
	"fmt"
	"io"
	"net"
	"os"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/egress"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/warden"
)

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

// newServices prepares what a plan needs: in open mode the credential
// proxy serves authL; in allowlist mode the listeners arrive from init, as
// does the warden's listener in both.
func newServices(pr *Prepared, authL net.Listener, conns connBounds, stderr io.Writer) (*services, error) {
	s := &services{authL: authL}
	s.auth, s.egress = newProxies(pr, conns, stderr)
	if err := pr.endForgeTLS(s.egress, stderr); err != nil {
		return nil, err
	}
	s.rules, s.refused = wardenRules(pr, stderr)
	var err error
	if s.control, s.child, err = newControlSocket(); err != nil {
		return nil, err
	}
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
		if err := s.serveProxy(want, l); err != nil {
			return err
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
