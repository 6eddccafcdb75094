package forge

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/connlimit"
)

// Host is one forge host whose TLS the launcher ends, and the credential
// it adds there: as git sends it (Basic) on a forge's host, as a Bearer
// token on a forge's API host (API: api.github.com, where the request
// gate's GitHub API rules hold).
type Host struct {
	Name       string
	Port       int
	Credential *Credential
	API        bool
}

// Addr is host:port.
func (h Host) Addr() string { return net.JoinHostPort(h.Name, strconv.Itoa(h.Port)) }

// authorization is the header value a request to path on the host gets:
// Bearer on an API host, and on a forge's own host for its API below /api/
// (GitHub Enterprise Server, Gitea, and GitLab, whose API takes a token
// as Bearer but not as Basic); Basic, as git sends it, for the rest.
func (h Host) authorization(path string) string {
	if h.API || strings.HasPrefix(path, "/api/") {
		return "Bearer " + h.Credential.Password
	}
	return "Basic " + basic(h.Credential.Username, h.Credential.Password)
}

// sandboxCredentials are the headers that carry a credential the sandbox
// sends (a placeholder at best): dropped from every request, so the forge
// reads the user's alone. GitLab takes a token in its own headers too.
var sandboxCredentials = []string{"Authorization", "Private-Token", "Job-Token"}

// PushGate decides a push before the forge sees it (package forgepush):
// forge reaches the same forge with the user's credential, repo is the
// repository's URL, body the request's body, decoded. A refusal is
// answered and nothing is forwarded.
type PushGate interface {
	Check(ctx context.Context, forge http.RoundTripper, repo *url.URL, body io.Reader) (forward io.Reader, refused Refusal, err error)
}

// RequestGate decides every request but a push before the forge sees it
// and before the credential is added (package forgeapi): api is the
// host's Host.API. A non-empty answer refuses the request, saying why; the
// gate may read the body, and leaves the request the same bytes.
type RequestGate interface {
	Check(api bool, r *http.Request) (refused string)
	Record(host, request, why string)
}

// Refusal is a push the gate refused: an answer git prints per ref, and
// its record in the denial log, one row for each ref refused.
type Refusal interface {
	WriteResponse(w http.ResponseWriter)
	Record()
}

// Dial opens the connection the egress proxy allowed to host:port: to an
// address it checked, or through the launching environment's proxy.
type Dial func(ctx context.Context, host string, port int) (net.Conn, error)

// Server ends the TLS of the tunnels to the forge hosts and forwards their
// requests with the user's credential.
type Server struct {
	Authority *Authority
	Hosts     []Host
	Dial      Dial
	Gate      PushGate    // nil: pushes go on as they are
	Requests  RequestGate // nil: every other request goes on as it is
	// RootCAs are what the forge's certificate is checked against; nil:
	// the system's.
	RootCAs *x509.CertPool

	once    sync.Once
	proxies map[string]*hostProxy
}

// quiet drops net/http's own error lines: the launcher's stderr is
// Claude's terminal.
var quiet = log.New(io.Discard, "", 0)

func (s *Server) init() {
	s.once.Do(func() {
		s.proxies = map[string]*hostProxy{}
		for _, h := range s.Hosts {
			s.proxies[strings.ToLower(h.Addr())] = s.newHostProxy(h)
		}
	})
}

// Terminates reports whether the launcher ends the TLS of a tunnel to
// host:port: a forge host named with a credential.
func (s *Server) Terminates(host string, port int) bool {
	s.init()
	_, ok := s.proxies[strings.ToLower(net.JoinHostPort(strings.TrimSuffix(host, "."), strconv.Itoa(port)))]
	return ok
}

// ServeTunnel serves the sandbox's side of a tunnel to host:port, whose
// CONNECT the egress proxy allowed and answered: TLS with the authority's
// certificate for that host whatever name the client asks for, then HTTP/1.1
// requests, each forwarded to that host, whatever Host they name.
func (s *Server) ServeTunnel(client net.Conn, host string, port int) {
	s.init()
	hp, ok := s.proxies[strings.ToLower(net.JoinHostPort(strings.TrimSuffix(host, "."), strconv.Itoa(port)))]
	if !ok {
		client.Close()
		return
	}
	cert, err := s.Authority.Certificate(hp.host.Name)
	if err != nil {
		client.Close()
		return
	}
	conn := tls.Server(client, &tls.Config{
		Certificates: []tls.Certificate{*cert},
		NextProtos:   []string{"http/1.1"},
		MinVersion:   tls.VersionTLS12,
	})
	srv := &http.Server{Handler: hp, ReadHeaderTimeout: connlimit.HeaderTimeout, MaxHeaderBytes: connlimit.MaxHeaderBytes,
		IdleTimeout: connlimit.IdleTimeout, ErrorLog: quiet}
	srv.Serve(&oneConn{conn: conn, done: make(chan struct{})})
}

// hostProxy forwards one forge host's requests.
type hostProxy struct {
	s         *Server
	host      Host
	masker    *masker
	transport *http.Transport
	forward   *httputil.ReverseProxy
}

func (s *Server) newHostProxy(h Host) *hostProxy {
	hp := &hostProxy{s: s, host: h, masker: newMasker(secretForms(h.Credential.Username, h.Credential.Password))}
	hp.transport = &http.Transport{
		// Always the named host, whatever the request says.
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return s.Dial(ctx, h.Name, h.Port)
		},
		TLSClientConfig:     &tls.Config{ServerName: h.Name, RootCAs: s.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 15 * time.Second,
		MaxIdleConns:        8,
		IdleConnTimeout:     30 * time.Second,
	}
	hp.forward = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = hp.target(r.In.URL)
			r.Out.Host = ""
			for k := range r.Out.Header {
				if strings.HasPrefix(k, "Proxy-") {
					r.Out.Header.Del(k)
				}
			}
			r.Out.Header.Set("Authorization", h.authorization(r.Out.URL.Path))
			// The transport asks for gzip and decodes it, so the mask
			// reads the answer as sent; another coding is refused below.
			r.Out.Header.Del("Accept-Encoding")
			// A part of an answer can hold a part of the token, which
			// the mask does not know: answers come whole.
			r.Out.Header.Del("Range")
			r.Out.Header.Del("If-Range")
		},
		Transport:      hp.transport,
		ModifyResponse: hp.masked,
		FlushInterval:  -1,
		ErrorLog:       quiet,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusBadGateway)
			// The transport's error names the URL, never a header.
			fmt.Fprintf(w, "claude-sandbox: the forge %s: %v\n", h.Addr(), hp.maskText(err.Error()))
		},
	}
	return hp
}

// target is the URL of the named host with the request's path and query.
func (hp *hostProxy) target(in *url.URL) *url.URL {
	return &url.URL{Scheme: "https", Host: hp.host.Addr(), Path: in.Path, RawPath: in.RawPath, RawQuery: in.RawQuery}
}

func (hp *hostProxy) maskText(s string) string {
	b := []byte(s)
	hp.masker.mask(b)
	return string(b)
}

// masked passes an answer on with the credential masked in its headers and
// body, and without the cookies the forge sets. A protocol switch would leave a stream the mask does not read, and
// a body in a coding the transport did not decode one it cannot read: both
// are refused.
func (hp *hostProxy) masked(resp *http.Response) error {
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return errors.New("answered with a protocol switch, which the launcher does not carry for a forge")
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return fmt.Errorf("answered in the content coding %q, which the launcher cannot read for its credential", ce)
	}
	// A cookie the forge sets for a request it took the user's
	// credential for may be a session of the user's, which would outlive
	// the sandbox like the token: git and the API clients need none.
	resp.Header.Del("Set-Cookie")
	hp.masker.header(resp.Header)
	resp.Trailer = nil
	resp.Body = hp.masker.reader(resp.Body)
	return nil
}

func (hp *hostProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		http.Error(w, "claude-sandbox: no CONNECT within a forge's connection", http.StatusMethodNotAllowed)
		return
	}
	// A WebSocket or h2c switch would leave HTTP, and the mask with it.
	r.Header.Del("Upgrade")
	for _, h := range sandboxCredentials {
		r.Header.Del(h)
	}
	if hp.s.Gate != nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
		if !hp.gate(w, r) {
			return
		}
	} else if hp.s.Gate != nil && pushInAnotherForm(r) {
		// A forge may read as a push what the gate would not: a trailing
		// slash, another case, another method (a router that folds them).
		http.Error(w, "claude-sandbox: a push goes to the forge only as POST .../git-receive-pack, through the push gate", http.StatusForbidden)
		return
	} else if hp.s.Requests != nil {
		if why := hp.s.Requests.Check(hp.host.API, r); why != "" {
			hp.s.Requests.Record(hp.host.Addr(), r.Method+" "+r.URL.Path, why)
			refuseRequest(w, why)
			return
		}
	}
	hp.forward.ServeHTTP(w, r)
}

// refuseRequest answers a request the request gate refused as a forge's
// API answers an error, so gh and the API's clients print the reason.
func refuseRequest(w http.ResponseWriter, why string) {
	body, _ := json.Marshal(struct {
		Message string `json:"message"`
	}{"claude-sandbox: refused by the forge request rules (forge-api): " + why})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	w.Write(append(body, '\n'))
}

// pushInAnotherForm says whether r names receive-pack other than as the
// gate's one form: its path in any spelling, or a push's content type.
// The advertisement (GET .../info/refs?service=git-receive-pack) changes
// nothing and goes on.
func pushInAnotherForm(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.URL.Path), "receive-pack") ||
		strings.Contains(strings.ToLower(r.Header.Get("Content-Type")), "receive-pack")
}

// gate runs the push gate on a receive-pack request. It answers the
// request itself, and returns false, when the gate refuses or fails;
// otherwise r's body is what the gate forwards, decoded.
func (hp *hostProxy) gate(w http.ResponseWriter, r *http.Request) bool {
	body := io.Reader(r.Body)
	if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, "claude-sandbox: the push's gzip body does not read: "+err.Error(), http.StatusBadRequest)
			return false
		}
		body = zr
	} else if ce := r.Header.Get("Content-Encoding"); ce != "" {
		http.Error(w, fmt.Sprintf("claude-sandbox: a push in the content coding %q is not read", ce), http.StatusBadRequest)
		return false
	}
	// The repository as the push spells it, escapes kept: the gate asks
	// the forge about the repository the push goes to (ADR 0043).
	repo := hp.target(r.URL)
	repo.Path = strings.TrimSuffix(repo.Path, "/git-receive-pack")
	repo.RawPath = strings.TrimSuffix(repo.RawPath, "/git-receive-pack")
	repo.RawQuery = ""
	forward, refused, err := hp.s.Gate.Check(r.Context(), credentialed{hp}, repo, body)
	switch {
	case err != nil:
		http.Error(w, "claude-sandbox: the push could not be checked, so it was not sent: "+hp.maskText(err.Error()), http.StatusBadGateway)
		return false
	case refused != nil:
		refused.Record()
		refused.WriteResponse(w)
		return false
	}
	// What the gate forwards may hold a file (a pack it checked), which the
	// request's end closes.
	if rc, ok := forward.(io.ReadCloser); ok {
		r.Body = rc
	} else {
		r.Body = io.NopCloser(forward)
	}
	// The gate forwards the bytes it was given: a body as sent keeps its
	// length (a forge's CGI back end, git http-backend among them, reads
	// a body by it); a decoded one goes chunked.
	if r.Header.Get("Content-Encoding") != "" {
		r.Header.Del("Content-Encoding")
		r.Header.Del("Content-Length")
		r.ContentLength = -1
	}
	return true
}

// credentialed is the transport the push gate reaches the forge with: the
// named host only, with the user's credential.
type credentialed struct{ hp *hostProxy }

func (c credentialed) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" || !strings.EqualFold(r.URL.Host, c.hp.host.Addr()) && !strings.EqualFold(r.URL.Host, c.hp.host.Name) {
		return nil, fmt.Errorf("the forge transport of %s does not carry a request to %s", c.hp.host.Addr(), r.URL.Redacted())
	}
	r = r.Clone(r.Context())
	r.URL = c.hp.target(r.URL)
	r.Host = ""
	r.Header.Set("Authorization", c.hp.host.authorization(r.URL.Path))
	return c.hp.transport.RoundTrip(r)
}

// oneConn is a listener that accepts conn once, then blocks until conn is
// closed, so http.Server serves exactly that connection and returns.
type oneConn struct {
	conn net.Conn
	once sync.Once
	done chan struct{}
}

func (l *oneConn) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = &closeNotified{Conn: l.conn, done: l.done} })
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.conn.LocalAddr() }

type closeNotified struct {
	net.Conn
	once sync.Once
	done chan struct{}
}

func (c *closeNotified) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.Close()
}
