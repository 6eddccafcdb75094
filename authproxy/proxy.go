package authproxy

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/connlimit"
	"github.com/claude-sandbox/claude-sandbox/internal/requesttarget"
)

// oauthBeta is the anthropic-beta flag the API requires with an OAuth access
// token; without it the API answers 401 "OAuth authentication is currently
// not supported".
const oauthBeta = "oauth-2025-04-20"

// copyBufferSize is what one stream copies at a time: io.Copy's 32 KiB. The
// benchmark found 128 KiB, with a 64 KiB transport read buffer, no faster.
const copyBufferSize = 32 << 10

// Server is the credential proxy for one sandbox.
type Server struct {
	Upstream *url.URL // the real API's base; a path prefix in it is kept
	// Credential is what the upstream gets; the sandbox never sees it.
	Credential *Credential
	// Placeholder is the session token Claude was given in place of its
	// login. Requests without it are refused.
	Placeholder string
	TokenURL    string            // where a file login is refreshed; "" means TokenURL
	Transport   http.RoundTripper // nil means a transport of our own, which connects with Dial
	// Dial connects the transport of our own to the upstream and the token
	// endpoint: through the launching environment's proxy, where it names
	// one (package upstreamproxy). nil means directly.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxConns is how many connections Serve holds at once (each costs
	// the launcher two descriptors while proxied); one more is answered
	// 503 and closed. 0 means DefaultMaxConns.
	MaxConns int
}

// DefaultMaxConns bounds the credential proxy's connections: Claude Code
// keeps a few (its requests, subagents', the title's, compaction's).
const DefaultMaxConns = 128

// PlaceholderPrefix starts every session token, and tells a reader of
// Claude's environment (or `claude-sandbox verify`) what it is.
const PlaceholderPrefix = "claude-sandbox-session-"

// NewPlaceholder returns a fresh session token.
func NewPlaceholder() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails: the runtime aborts when it cannot read randomness
	return PlaceholderPrefix + hex.EncodeToString(b)
}

// Serve answers the sandbox's API requests on l until l is closed.
func (s *Server) Serve(l net.Listener) error {
	if s.Upstream == nil || s.Credential == nil || s.Placeholder == "" {
		return errors.New("authproxy: a Server needs an Upstream, a Credential and a Placeholder")
	}
	rt := s.Transport
	if rt == nil {
		rt = newTransport(s.Dial)
	}
	// The launcher's stderr is Claude's terminal; failures reach Claude as
	// error answers instead.
	quiet := log.New(io.Discard, "", 0)
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { s.rewrite(pr, rt) },
		Transport:     rt,
		FlushInterval: -1, // every event reaches Claude as it arrives
		BufferPool:    bufferPool{},
		ErrorLog:      quiet,
		ErrorHandler:  s.upstreamError,
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !s.carriesPlaceholder(r.Header) {
				apiError(w, http.StatusUnauthorized, "authentication_error", "this request lacks the session token the sandbox was given; the credential proxy forwards nothing without it")
				return
			}
			if !apiMethods[r.Method] {
				w.Header().Set("Allow", "GET, HEAD, POST, DELETE")
				apiError(w, http.StatusMethodNotAllowed, "invalid_request_error", "the credential proxy forwards only the API's methods (GET, HEAD, POST, DELETE), not "+r.Method)
				return
			}
			if !requesttarget.Plain(r.RequestURI) {
				apiError(w, http.StatusBadRequest, "invalid_request_error", "the credential proxy forwards only a plain absolute path under the API's base: segments of letters, digits, - . _ ~ (no empty, . or .. segment), then a query of visible ASCII but # and backslash")
				return
			}
			// The upstream may answer before the request body has been read
			// to its end; without full duplex the server would then drain
			// and close the body under the transport, which aborts the
			// stream.
			http.NewResponseController(w).EnableFullDuplex()
			proxy.ServeHTTP(w, r)
		}),
		// A connection that stalls, or sends headers without end, is
		// dropped: the sandbox's, or any local process's in open mode.
		ReadHeaderTimeout: connlimit.HeaderTimeout,
		MaxHeaderBytes:    connlimit.MaxHeaderBytes,
		IdleTimeout:       connlimit.IdleTimeout,
		ErrorLog:          quiet,
	}
	max := cmp.Or(s.MaxConns, DefaultMaxConns)
	body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{
		"type": "api_error", "message": fmt.Sprintf("claude-sandbox: the credential proxy holds %d connections, its bound; close some and try again", max)}})
	return srv.Serve(connlimit.Listen(l, max, connlimit.Refusal("", "application/json", string(body))))
}

// apiMethods are the methods of Anthropic's API, and HEAD, which is GET
// without the body. The credential goes with no other: a server or gateway
// that answers TRACE echoes the request back, credential and all, and
// CONNECT asks a gateway for a tunnel.
var apiMethods = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodDelete: true}

// LastError is why the last refresh of a file login failed, nil when it
// succeeded or none was needed. It waits for a refresh in progress.
func (s *Server) LastError() error { return s.Credential.lastError() }

// carriesPlaceholder accepts the placeholder where Claude Code puts a token:
// Authorization: Bearer, or x-api-key.
func (s *Server) carriesPlaceholder(h http.Header) bool {
	want := []byte(s.Placeholder)
	auth := h.Get("Authorization")
	if len(auth) > len("Bearer ") && strings.EqualFold(auth[:len("Bearer ")], "Bearer ") &&
		subtle.ConstantTimeCompare([]byte(auth[len("Bearer "):]), want) == 1 {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(h.Get("X-Api-Key")), want) == 1
}

// rewrite points the request at the upstream and swaps the placeholder for
// the credential. Hop-by-hop headers are gone already: ReverseProxy drops
// them before calling Rewrite.
func (s *Server) rewrite(pr *httputil.ProxyRequest, rt http.RoundTripper) {
	pr.SetURL(s.Upstream)
	h := pr.Out.Header
	h.Del("Authorization")
	h.Del("X-Api-Key")
	secret := s.Credential.token(rt, cmp.Or(s.TokenURL, TokenURL))
	switch s.Credential.Kind {
	case APIKey:
		h.Set("X-Api-Key", secret)
	case Bearer:
		h.Set("Authorization", "Bearer "+secret)
	case OAuth:
		h.Set("Authorization", "Bearer "+secret)
		addBeta(h, oauthBeta)
	}
}

// addBeta adds flag to the comma-separated anthropic-beta list unless the
// list has it.
func addBeta(h http.Header, flag string) {
	list := h.Values("Anthropic-Beta")
	for _, v := range list {
		for f := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(f) == flag {
				return
			}
		}
	}
	h.Set("Anthropic-Beta", strings.Join(append(list, flag), ","))
}

func (s *Server) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // Claude gave up on the request; nobody is left to tell
	}
	apiError(w, http.StatusBadGateway, "api_error", fmt.Sprintf("the credential proxy cannot reach %s: %s", s.Upstream.Redacted(), unreachable(err)))
}

// unreachable says why the API could not be reached. A certificate that
// does not verify is described, not quoted: behind a proxy that inspects
// TLS it is the proxy's, and its names and authority name the proxy.
// upstreamproxy's errors name nothing of the proxy already.
func unreachable(err error) string {
	var host x509.HostnameError
	var unknown x509.UnknownAuthorityError
	var cert *tls.CertificateVerificationError
	switch {
	case errors.As(err, &host):
		return "its TLS certificate is not valid for " + host.Host
	case errors.As(err, &unknown):
		return "its TLS certificate is signed by an unknown authority"
	case errors.As(err, &cert):
		return "its TLS certificate does not verify"
	}
	return err.Error()
}

// apiError answers in the API's own error shape, so that Claude shows the
// message.
func apiError(w http.ResponseWriter, status int, kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": kind, "message": "claude-sandbox: " + msg},
	})
}

func newTransport(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	return &http.Transport{
		// Proxy stays nil: an upstream proxy is the launcher's choice, made
		// in dial, never one the process environment names.
		DialContext:         dial,
		ForceAttemptHTTP2:   true,
		TLSHandshakeTimeout: 10 * time.Second,
		// Claude runs several requests at once (subagents, title, compaction).
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
		// Answers pass through as the API encoded them.
		DisableCompression: true,
		// A request carries the whole conversation (hundreds of kilobytes
		// late in a session): copied through the default 4 KiB buffer, it
		// took a read and a write system call per 4 KiB.
		WriteBufferSize: copyBufferSize,
		ReadBufferSize:  copyBufferSize,
	}
}

// bufferPool lends ReverseProxy its copy buffers, so that a stream allocates
// none of its own.
type bufferPool struct{}

var buffers = sync.Pool{New: func() any { return new([copyBufferSize]byte) }}

func (bufferPool) Get() []byte  { return buffers.Get().(*[copyBufferSize]byte)[:] }
func (bufferPool) Put(b []byte) { buffers.Put((*[copyBufferSize]byte)(b)) }
