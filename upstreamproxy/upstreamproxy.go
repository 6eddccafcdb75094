// Package upstreamproxy is the upstream (corporate) proxy the launching
// environment names (HTTPS_PROXY, HTTP_PROXY, NO_PROXY and their
// lower-case forms), for the connections the launcher's own proxies make
// on the sandbox's behalf: the allowlist proxy's and the credential
// proxy's. It reads the variables from the environment
// the launcher was given, never from the sandbox, and its errors never name
// the upstream proxy's address or credentials, because they reach the
// sandbox as refusals.
package upstreamproxy

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
)

// Settings are the proxies the launching environment names. The zero value
// names none: every connection is direct.
type Settings struct {
	HTTPS *Proxy // tunnels: the allowlist proxy's CONNECT, the credential proxy's HTTPS
	HTTP  *Proxy // the allowlist proxy's plain http:// requests
	// NoProxy is the NO_PROXY list as written; noProxy is it parsed.
	NoProxy string
	noProxy []exempt
}

// Proxy is one upstream proxy.
type Proxy struct {
	Var  string   // the variable that named it, for messages
	URL  *url.URL // http://[USER:PASSWORD@]HOST:PORT
	Addr string   // HOST:PORT to dial
}

// exempt is one NO_PROXY entry.
type exempt struct {
	all    bool         // "*"
	prefix netip.Prefix // an address or CIDR
	domain string       // a name, which also exempts its subdomains
	sub    bool         // the name was written ".example.com": subdomains only
	port   int          // 0: any port
}

// FromEnviron reads the proxy variables of the launching environment: the upper-case form
// first, then the lower-case one, as Go's own clients do. A variable that
// is set but is not an http:// proxy URL is an error naming the variable,
// never its value, which may hold a password.
func FromEnviron(env launchenv.Env) (*Settings, error) {
	s := &Settings{}
	var err error
	if s.HTTPS, err = parse(env, "HTTPS_PROXY", "https_proxy"); err != nil {
		return nil, err
	}
	if s.HTTP, err = parse(env, "HTTP_PROXY", "http_proxy"); err != nil {
		return nil, err
	}
	name, list := first(env, "NO_PROXY", "no_proxy")
	if s.noProxy, err = parseNoProxy(list); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.NoProxy = list
	return s, nil
}

func first(env launchenv.Env, names ...string) (name, value string) {
	for _, n := range names {
		if v := env.Get(n); v != "" {
			return n, v
		}
	}
	return "", ""
}

func parse(env launchenv.Env, names ...string) (*Proxy, error) {
	name, raw := first(env, names...)
	if raw == "" {
		return nil, nil
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	const form = "http://[USER:PASSWORD@]HOST:PORT"
	switch {
	case err != nil || u.Hostname() == "":
		return nil, fmt.Errorf("%s is not a proxy URL (%s)", name, form)
	case u.Scheme != "http":
		return nil, fmt.Errorf("%s is a %s:// proxy; the launcher reaches an upstream proxy over http:// only (%s)", name, u.Scheme, form)
	case u.Path != "" && u.Path != "/" || u.RawQuery != "":
		return nil, fmt.Errorf("%s has a path; a proxy URL is %s", name, form)
	}
	port := u.Port()
	if port == "" {
		port = "80" // as Go's and Python's clients assume for http://
	} else if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return nil, fmt.Errorf("%s has no valid port (%s)", name, form)
	}
	return &Proxy{Var: name, URL: u, Addr: net.JoinHostPort(u.Hostname(), port)}, nil
}

func parseNoProxy(list string) ([]exempt, error) {
	var out []exempt
	for _, e := range strings.Split(list, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if e == "*" {
			out = append(out, exempt{all: true})
			continue
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			out = append(out, exempt{prefix: p.Masked()})
			continue
		}
		host, port := e, 0
		if h, ps, err := net.SplitHostPort(e); err == nil {
			p, err := strconv.Atoi(ps)
			if err != nil || p < 1 || p > 65535 {
				return nil, fmt.Errorf("%q has no valid port", e)
			}
			host, port = h, p
		}
		if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
			out = append(out, exempt{prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), port: port})
			continue
		}
		host = strings.TrimPrefix(host, "*")
		sub := strings.HasPrefix(host, ".")
		out = append(out, exempt{domain: strings.TrimSuffix(strings.TrimPrefix(host, "."), "."), sub: sub, port: port})
	}
	return out, nil
}

// None reports whether no upstream proxy is named.
func (s *Settings) None() bool { return s == nil || s.HTTPS == nil && s.HTTP == nil }

// ForTunnel is the proxy a tunnel to host:port goes through, nil for a
// direct connection.
func (s *Settings) ForTunnel(host string, port int) *Proxy {
	if s == nil || s.HTTPS == nil || s.exempt(host, port) {
		return nil
	}
	return s.HTTPS
}

// ForHTTP is the proxy a plain http:// request to host:port goes through,
// nil for a direct one.
func (s *Settings) ForHTTP(host string, port int) *Proxy {
	if s == nil || s.HTTP == nil || s.exempt(host, port) {
		return nil
	}
	return s.HTTP
}

// exempt reports whether host:port is reached directly: NO_PROXY names it,
// or it is the machine's own loopback, which no upstream proxy could reach
// on the launcher's behalf.
func (s *Settings) exempt(host string, port int) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	a, err := netip.ParseAddr(host)
	if err == nil {
		a = a.Unmap()
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || err == nil && a.IsLoopback() {
		return true
	}
	for _, e := range s.noProxy {
		if e.port != 0 && e.port != port {
			continue
		}
		switch {
		case e.all:
			return true
		case e.prefix.IsValid():
			if err == nil && e.prefix.Contains(a) {
				return true
			}
		case err != nil && (host == e.domain && !e.sub || strings.HasSuffix(host, "."+e.domain)):
			return true
		}
	}
	return false
}

// Describe says which proxies are in force, for doctor: addresses and
// whether credentials are given, never the credentials.
func (s *Settings) Describe() string {
	if s.None() {
		return "none: the launcher's proxies connect directly"
	}
	var parts []string
	for _, p := range []struct {
		what string
		p    *Proxy
	}{{"tunnels and the credential proxy", s.HTTPS}, {"plain http://", s.HTTP}} {
		if p.p == nil {
			continue
		}
		creds := ""
		if p.p.URL.User != nil {
			creds = ", with credentials (not shown)"
		}
		parts = append(parts, fmt.Sprintf("%s via %s=http://%s%s", p.what, p.p.Var, p.p.Addr, creds))
	}
	if s.HTTPS == nil {
		parts = append(parts, "tunnels and the credential proxy direct (no HTTPS_PROXY)")
	}
	if s.HTTP == nil {
		parts = append(parts, "plain http:// direct (no HTTP_PROXY)")
	}
	if s.NoProxy != "" {
		parts = append(parts, "NO_PROXY="+s.NoProxy+" direct")
	}
	return strings.Join(parts, "; ")
}

// Authorization is the Proxy-Authorization value for p's credentials, ""
// when it has none.
func (p *Proxy) Authorization() string {
	if p.URL.User == nil {
		return ""
	}
	pw, _ := p.URL.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(p.URL.User.Username()+":"+pw))
}

// DialFunc connects to an address, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// handshakeTimeout bounds the CONNECT exchange with the upstream proxy.
const handshakeTimeout = 30 * time.Second

// Error is a failure of an upstream proxy, in words of the launcher's own:
// the variable that names the proxy and the status code it answered, never
// its address, its credentials or anything it wrote, which may name it or
// its user.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func failed(format string, args ...any) *Error { return &Error{fmt.Sprintf(format, args...)} }

// Tunnel opens a tunnel through p to target (HOST:PORT, the name as the
// client gave it: the upstream proxy resolves it). A failure is an *Error.
func Tunnel(ctx context.Context, dial DialFunc, p *Proxy, target string) (net.Conn, error) {
	c, err := dial(ctx, "tcp", p.Addr)
	if err != nil {
		return nil, DialError(p, err)
	}
	deadline := time.Now().Add(handshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.SetDeadline(deadline)
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if auth := p.Authorization(); auth != "" {
		req += "Proxy-Authorization: " + auth + "\r\n"
	}
	if _, err := c.Write([]byte(req + "\r\n")); err != nil {
		c.Close()
		return nil, failed("the upstream proxy (%s) closed the connection: %s", p.Var, describe(err))
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		if !transportFailure(err) {
			// net/http quotes what it could not parse.
			return nil, failed("the upstream proxy (%s) answered CONNECT with something other than HTTP", p.Var)
		}
		return nil, failed("the upstream proxy (%s) gave no answer to CONNECT: %s", p.Var, describe(err))
	}
	// Only the status code of a refusal is the launcher's to pass on: the
	// reason phrase, the headers and the page are the proxy's, and may
	// name it. A 2xx to CONNECT has no body, the tunnel follows.
	if err := Refusal(p, resp.StatusCode); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		// A server that speaks first (ssh) may have answered already.
		early, _ := br.Peek(br.Buffered())
		return &prefixed{Conn: c, early: early}, nil
	}
	return c, nil
}

// Refusal is the error for an upstream proxy's status code: nil for a 2xx,
// and for 407 one that says whether the variable carries credentials.
func Refusal(p *Proxy, code int) error {
	status := StatusText(code)
	switch {
	case code/100 == 2:
		return nil
	case code == http.StatusProxyAuthRequired && p.URL.User == nil:
		return failed("the upstream proxy (%s) asks for credentials (%s), and %s names none: write http://USER:PASSWORD@HOST:PORT", p.Var, status, p.Var)
	case code == http.StatusProxyAuthRequired:
		return failed("the upstream proxy (%s) refused the credentials %s names (%s)", p.Var, p.Var, status)
	}
	return failed("the upstream proxy (%s) refused: %s", p.Var, status)
}

// StatusText is a status line's code and the standard reason phrase for
// it, not the one the proxy wrote.
func StatusText(code int) string {
	return strings.TrimSpace(strconv.Itoa(code) + " " + http.StatusText(code))
}

// DialError is the error for a failed connection to p.
func DialError(p *Proxy, err error) error {
	return failed("cannot reach the upstream proxy (%s): %s", p.Var, describe(err))
}

// Broken is the error for an exchange with p that failed once connected:
// net/http's own text may quote what the proxy wrote.
func Broken(p *Proxy, err error) error {
	if !transportFailure(err) {
		return failed("the upstream proxy (%s) gave no usable answer", p.Var)
	}
	return failed("the upstream proxy (%s) did not answer: %s", p.Var, describe(err))
}

// transportFailure reports whether err is the connection's failure rather
// than something the proxy wrote.
func transportFailure(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// describe says what failed in words that cannot name the proxy: net's
// errors carry its address ("dial tcp ADDR:"), a failed lookup its name
// and the resolver's address.
func describe(err error) string {
	var dns *net.DNSError
	var sys *os.SyscallError
	var ne net.Error
	switch {
	case errors.As(err, &dns):
		return "its name does not resolve"
	case errors.As(err, &sys):
		return sys.Error() // "connect: connection refused"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "end of stream"
	}
	return "the connection failed"
}

// prefixed is a tunnel whose first bytes were read with the proxy's answer.
type prefixed struct {
	net.Conn
	early []byte
}

func (c *prefixed) Read(b []byte) (int, error) {
	if len(c.early) > 0 {
		n := copy(b, c.early)
		c.early = c.early[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// CloseWrite passes an end of stream on, as a TCP connection does.
func (c *prefixed) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// Dialer connects through the upstream proxy where the settings say so,
// else with direct. For the credential proxy's transport, whose TLS runs
// over the connection it returns.
func (s *Settings) Dialer(direct DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, ps, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		port, _ := strconv.Atoi(ps)
		if p := s.ForTunnel(host, port); p != nil {
			return Tunnel(ctx, direct, p, addr)
		}
		return direct(ctx, network, addr)
	}
}
