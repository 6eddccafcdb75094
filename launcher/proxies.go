package launcher

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"time"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/egress"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// DefaultUpstream is Claude Code's API when the caller names none.
const DefaultUpstream = "https://api.anthropic.com"

// listenCredentialProxy opens, in open mode, the credential proxy's
// listener on the container's loopback, whose address the plan gives
// Claude. In allowlist mode the proxy listens inside, at a fixed address
// (sandbox.Listener); a client of the background service uses the
// service's (shared: adoptGateway).
func listenCredentialProxy(pr *Prepared, shared bool) (net.Listener, error) {
	if pr.Credential == nil || shared || pr.Conf.NetworkMode() == sandbox.NetworkAllowlist {
		return nil, nil
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the credential proxy cannot listen on loopback: %w", err)
	}
	return l, nil
}

// newProxies makes the proxies a plan needs: the credential proxy when
// the launch keeps the login and serves it itself, the egress proxy in
// allowlist mode; each nil otherwise.
func newProxies(pr *Prepared, conns connBounds, stderr io.Writer) (*authproxy.Server, *egress.Proxy) {
	var auth *authproxy.Server
	var eg *egress.Proxy
	if pr.Credential != nil && !pr.Running.shared {
		auth = &authproxy.Server{Upstream: pr.Upstream, Credential: pr.Credential, Placeholder: pr.Running.gateway.Token, TokenURL: authproxy.TokenURL,
			Dial: pr.Via.Dialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext), MaxConns: conns.auth}
	}
	if pr.Plan.Egress != nil {
		eg = &egress.Proxy{Policy: *pr.Plan.Egress, Upstream: pr.Via, MaxConns: conns.egress, Log: &egress.Log{
			Path: filepath.Join(pr.Launch.Home, layout.DenialsLog), Workspace: pr.Plan.Workspace, Errors: stderr,
		}}
	}
	return auth, eg
}

// serveProxy serves l, a listening socket init handed over for want, with
// the proxy the plan named for it.
func (s *services) serveProxy(want sandbox.Listener, l net.Listener) error {
	switch want.Proxy {
	case sandbox.EgressProxy:
		go s.egress.Serve(l)
	case sandbox.CredentialProxy:
		go s.auth.Serve(l)
	default:
		l.Close()
		return fmt.Errorf("the plan has a listener for %q, which the launcher does not serve", want.Proxy)
	}
	return nil
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
