package egress

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/upstreamproxy"
	"github.com/claude-sandbox/claude-sandbox/upstreamproxy/proxytest"
)

// corporate starts an origin and an upstream proxy in front of it that
// requires alice's credentials, and returns the proxy's log and the
// environment that names it with creds.
func corporate(t *testing.T, creds string) (*proxytest.Server, *upstreamproxy.Settings, string) {
	t.Helper()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ORIGIN "+r.Host+r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	srv := &proxytest.Server{User: "alice", Password: "s3cret", Origin: origin.Listener.Addr().String()}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go srv.Serve(l)
	settings, err := upstreamproxy.FromEnviron(launchenv.Read([]string{"HTTPS_PROXY=http://" + creds + l.Addr().String(), "HTTP_PROXY=http://" + creds + l.Addr().String(), "NO_PROXY=internal.test"}))
	if err != nil {
		t.Fatal(err)
	}
	return srv, settings, l.Addr().String()
}

// noDNS fails every lookup, as a container behind a corporate proxy often
// does for outside names.
func noDNS(_ context.Context, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestUpstreamProxy(t *testing.T) {
	srv, settings, corpAddr := corporate(t, "alice:s3cret@")
	p := &Proxy{
		Policy:   Policy{Domains: []hostaddr.Domain{{Host: "allowed.test"}, {Host: "internal.test"}}},
		Resolve:  noDNS,
		Log:      &Log{Path: filepath.Join(t.TempDir(), "denials.log")},
		Upstream: settings,
	}
	proxy := startProxy(t, p)

	// A tunnel by name, which the container cannot resolve: the upstream
	// proxy gets the name and the credentials.
	c, br, resp := connect(t, proxy, "allowed.test:443", "GET /tunnel HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT allowed.test:443: %s", resp.Status)
	}
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(inner.Body)
	c.Close()
	if string(body) != "ORIGIN allowed.test/tunnel" {
		t.Errorf("through the tunnel: %q", body)
	}

	// Plain http:// goes to HTTP_PROXY as an absolute URI; the upstream
	// proxy's Via header stays outside.
	resp, err = proxyClient(proxy).Get("http://allowed.test/plain")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ORIGIN allowed.test/plain" {
		t.Errorf("GET http://allowed.test/plain: %s %q", resp.Status, body)
	}
	if v := resp.Header.Get("Via"); v != "" {
		t.Errorf("the upstream proxy's Via reached the client: %q", v)
	}

	// The allowlist decides first: a name it refuses, or a tunnel to port
	// 80 of a name without that port in its line, never reaches the
	// upstream proxy. NO_PROXY's name is dialled directly, after the
	// launcher's own lookup (which fails here).
	_, _, resp = connect(t, proxy, "denied.test:443", "")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(DeniedHeader) != "not in the allowlist" {
		t.Errorf("CONNECT denied.test:443: %s %q, want 403 not in the allowlist", resp.Status, resp.Header.Get(DeniedHeader))
	}
	_, _, resp = connect(t, proxy, "allowed.test:80", "")
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get(DeniedHeader), "a tunnel to port 80 needs allow-domain = allowed.test:80") {
		t.Errorf("CONNECT allowed.test:80: %s %q, want 403 naming the line it needs", resp.Status, resp.Header.Get(DeniedHeader))
	}
	resp, err = proxyClient(proxy).Get("http://denied.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET http://denied.test/: %s, want 403", resp.Status)
	}
	_, _, resp = connect(t, proxy, "internal.test:443", "")
	if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(resp.Header.Get(DeniedHeader), "cannot resolve: ") {
		t.Errorf("CONNECT internal.test:443 (NO_PROXY): %s %q, want the launcher's own lookup", resp.Status, resp.Header.Get(DeniedHeader))
	}
	want := []string{"CONNECT allowed.test:443 auth=ok", "GET http://allowed.test/plain auth=ok"}
	if got := srv.Log(); !slices.Equal(got, want) {
		t.Errorf("the upstream proxy carried %q, want %q", got, want)
	}
	ds, _ := Recent(p.Log.Path, 10)
	if len(ds) != 4 {
		t.Errorf("denials %+v, want the four refusals", ds)
	}
	for _, d := range ds {
		if strings.Contains(d.Reason, corpAddr) {
			t.Errorf("a denial names the upstream proxy: %+v", d)
		}
	}
}

func TestUpstreamProxyCredentials(t *testing.T) {
	for creds, want := range map[string]string{
		"alice:wrong@": "the upstream proxy (HTTPS_PROXY) refused the credentials HTTPS_PROXY names (407 Proxy Authentication Required)",
		"":             "the upstream proxy (HTTPS_PROXY) asks for credentials (407 Proxy Authentication Required), and HTTPS_PROXY names none: write http://USER:PASSWORD@HOST:PORT",
	} {
		_, settings, corpAddr := corporate(t, creds)
		p := &Proxy{Policy: Policy{Domains: []hostaddr.Domain{{Host: "allowed.test"}}}, Resolve: noDNS, Log: &Log{Path: filepath.Join(t.TempDir(), "denials.log")}, Upstream: settings}
		proxy := startProxy(t, p)
		_, _, resp := connect(t, proxy, "allowed.test:443", "")
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(DeniedHeader) != want {
			t.Errorf("%q: CONNECT: %s %q, want 502 %q", creds, resp.Status, resp.Header.Get(DeniedHeader), want)
		}
		if strings.Contains(string(body), corpAddr) || strings.Contains(string(body), "wrong") {
			t.Errorf("%q: the refusal names the upstream proxy or its credentials: %q", creds, body)
		}
		resp, err := proxyClient(proxy).Get("http://allowed.test/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		wantHTTP := strings.ReplaceAll(want, "HTTPS_PROXY", "HTTP_PROXY")
		if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(DeniedHeader) != wantHTTP || strings.Contains(string(body), corpAddr) {
			t.Errorf("%q: GET: %s %q %q, want 502 %q", creds, resp.Status, resp.Header.Get(DeniedHeader), body, wantHTTP)
		}
		if ds, _ := Recent(p.Log.Path, 10); len(ds) != 0 {
			t.Errorf("%q: the upstream proxy's refusals were recorded as denials: %+v", creds, ds)
		}
	}
}

// An upstream proxy that does not answer: a 502 naming the variable, not
// the address.
func TestUpstreamProxyUnreachable(t *testing.T) {
	settings, err := upstreamproxy.FromEnviron(launchenv.Read([]string{"HTTP_PROXY=http://alice:s3cret@127.0.0.1:1", "HTTPS_PROXY=http://alice:s3cret@127.0.0.1:1"}))
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Policy: Policy{Domains: []hostaddr.Domain{{Host: "allowed.test"}}}, Resolve: noDNS, Upstream: settings}
	proxy := startProxy(t, p)
	resp, err := proxyClient(proxy).Get("http://allowed.test/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := "cannot reach the upstream proxy (HTTP_PROXY): connect: connection refused"
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(DeniedHeader) != want || strings.Contains(string(body), "127.0.0.1:1") {
		t.Errorf("GET: %s %q %q, want 502 %q", resp.Status, resp.Header.Get(DeniedHeader), body, want)
	}
	_, _, resp = connect(t, proxy, "allowed.test:443", "")
	if want := strings.ReplaceAll(want, "HTTP_PROXY", "HTTPS_PROXY"); resp.StatusCode != http.StatusBadGateway || resp.Header.Get(DeniedHeader) != want {
		t.Errorf("CONNECT: %s %q, want 502 %q", resp.Status, resp.Header.Get(DeniedHeader), want)
	}
}

// Nothing the corporate proxy says about itself reaches the sandbox but a
// status code: not the headers it adds to what it relays (X-Cache, Via,
// an early hint's), not the status line, headers and page of its own
// refusals, which name it and the user, not an answer that is not HTTP.
// The origin's own answer, and its headers that clients need, pass.
func TestUpstreamProxySaysNothingOfItself(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/x-origin")
		w.Header().Set("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT")
		w.Header().Set("X-Origin-Private", "o")
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
		io.WriteString(w, "ORIGIN "+r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	corp := &proxytest.Server{User: "alice", Password: "s3cret", Origin: origin.Listener.Addr().String(), Refuse: "refused.test", NotHTTP: "garbled.test", EarlyHints: true}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go corp.Serve(l)
	env := "http://alice:s3cret@" + l.Addr().String()
	settings, err := upstreamproxy.FromEnviron(launchenv.Read([]string{"HTTPS_PROXY=" + env, "HTTP_PROXY=" + env}))
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{
		Policy:   Policy{Domains: []hostaddr.Domain{{Host: "allowed.test"}, {Host: "refused.test"}, {Host: "garbled.test"}}},
		Resolve:  noDNS,
		Log:      &Log{Path: filepath.Join(t.TempDir(), "denials.log")},
		Upstream: settings,
	}
	proxy := startProxy(t, p)

	// plain sends a plain request and returns everything that came back,
	// 1xx answers included.
	plain := func(target string) string {
		t.Helper()
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		got, _ := io.ReadAll(c)
		return string(got)
	}
	// The proxy relays the origin's answers after an early hint of its own.
	const hint = "HTTP/1.1 103 Early Hints\r\n\r\n"
	for _, tc := range []struct{ target, status, has string }{
		{"http://allowed.test/plain", hint + "HTTP/1.1 200 OK\r\n", "\r\n\r\nORIGIN /plain"},
		{"http://allowed.test/missing", hint + "HTTP/1.1 404 Not Found\r\n", "\r\n\r\nclaude-sandbox: allowed.test:80 answered 404 Not Found through the upstream proxy (HTTP_PROXY); the answer's headers and body stay outside, as they may be the proxy's own\n"},
		{"http://refused.test/", "HTTP/1.1 403 Forbidden\r\n", "\r\n\r\nclaude-sandbox: refused.test:80 answered 403 Forbidden through the upstream proxy (HTTP_PROXY); the answer's headers and body stay outside, as they may be the proxy's own\n"},
		{"http://garbled.test/", "HTTP/1.1 502 Bad Gateway\r\n", "\r\nX-Claude-Sandbox-Denied: the upstream proxy (HTTP_PROXY) gave no usable answer\r\n"},
	} {
		got := plain(tc.target)
		if !strings.HasPrefix(got, tc.status) || !strings.Contains(got, tc.has) {
			t.Errorf("GET %s: got\n%s\nwant %q and %q", tc.target, got, tc.status, tc.has)
		}
		for _, secret := range []string{proxytest.Name, "alice", "squid", "X-Cache", "X-Origin-Private"} {
			if strings.Contains(got, secret) {
				t.Errorf("GET %s: the answer has %q:\n%s", tc.target, secret, got)
			}
		}
	}
	if got := plain("http://allowed.test/plain"); !strings.Contains(got, "Content-Type: text/x-origin\r\n") || !strings.Contains(got, "Last-Modified: Tue, 01 Dec 2026 10:00:00 GMT\r\n") {
		t.Errorf("the origin's Content-Type and Last-Modified did not pass:\n%s", got)
	}

	for target, want := range map[string]string{
		"refused.test:443": "the upstream proxy (HTTPS_PROXY) refused: 403 Forbidden",
		"garbled.test:443": "the upstream proxy (HTTPS_PROXY) answered CONNECT with something other than HTTP",
	} {
		_, _, resp := connect(t, proxy, target, "")
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusBadGateway || resp.Header.Get(DeniedHeader) != want {
			t.Errorf("CONNECT %s: %s %q, want 502 %q", target, resp.Status, resp.Header.Get(DeniedHeader), want)
		}
		if strings.Contains(string(body), proxytest.Name) || strings.Contains(resp.Header.Get(DeniedHeader), proxytest.Name) {
			t.Errorf("CONNECT %s: the refusal names the proxy: %q", target, body)
		}
	}
	if ds, _ := Recent(p.Log.Path, 10); len(ds) != 0 {
		t.Errorf("the upstream proxy's answers were recorded as denials: %+v", ds)
	}
}
