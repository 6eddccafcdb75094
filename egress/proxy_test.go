package egress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
)

// startProxy serves p on a loopback port until the test ends, and checks
// that Serve returns cleanly when its listener is closed.
func startProxy(t *testing.T, p *Proxy) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(l) }()
	t.Cleanup(func() {
		l.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve returned %v after its listener closed, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after its listener closed")
		}
	})
	return l.Addr().String()
}

// loopbackProxy allows allowed.test, which resolves to 127.0.0.1, on port;
// withAllowIP adds allow-ip 127.0.0.1/32 so the loopback answer is usable.
func loopbackProxy(t *testing.T, port int, withAllowIP bool) (*Proxy, string) {
	t.Helper()
	p := &Proxy{
		Policy:  Policy{Domains: []hostaddr.Domain{{Host: "allowed.test", Port: port}}},
		Resolve: fakeDNS(map[string][]string{"allowed.test": {"127.0.0.1"}}),
		Log:     &Log{Path: filepath.Join(t.TempDir(), "cache", "denials.log"), Workspace: "/work/proj"},
	}
	if withAllowIP {
		p.Policy.IPs = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	}
	return p, startProxy(t, p)
}

func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, s, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// connect sends a CONNECT for target, followed at once by early, and
// returns the connection with the proxy's answer.
func connect(t *testing.T, proxy, target, early string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	return send(t, proxy, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n"+early, http.MethodConnect)
}

// send writes raw to the proxy and reads the answer to a request of method.
func send(t *testing.T, proxy, raw, method string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	return c, br, resp
}

func proxyClient(proxy string) *http.Client {
	return &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: proxy})},
		Timeout:   10 * time.Second,
	}
}

func TestConnectTunnel(t *testing.T) {
	// The upstream answers only once the client's half is closed, so the
	// answer arrives only if the proxy passes each end of stream on alone.
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		c, err := up.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		got, _ := io.ReadAll(c)
		io.WriteString(c, "got:"+string(got))
	}()
	_, proxy := loopbackProxy(t, portOf(t, up.Addr().String()), true)

	c, br, resp := connect(t, proxy, "allowed.test:"+strconv.Itoa(portOf(t, up.Addr().String())), "early")
	if resp.Status != "200 Connection established" {
		t.Fatalf("CONNECT answered %q, want 200 Connection established", resp.Status)
	}
	if _, err := io.WriteString(c, "-late"); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "got:early-late" {
		t.Errorf("through the tunnel: %q, want %q", got, "got:early-late")
	}
}

func TestConnectUpstreamClosesFirst(t *testing.T) {
	// The upstream ends its half first; the client still sends after that.
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	received := make(chan string, 1)
	go func() {
		c, err := up.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "hello")
		c.(*net.TCPConn).CloseWrite()
		got, _ := io.ReadAll(c)
		received <- string(got)
	}()
	port := portOf(t, up.Addr().String())
	_, proxy := loopbackProxy(t, port, true)

	c, br, resp := connect(t, proxy, "allowed.test:"+strconv.Itoa(port), "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT answered %q", resp.Status)
	}
	if got, err := io.ReadAll(br); err != nil || string(got) != "hello" {
		t.Fatalf("read %q, %v; want hello and the upstream's end of stream", got, err)
	}
	io.WriteString(c, "bye")
	c.(*net.TCPConn).CloseWrite()
	select {
	case got := <-received:
		if got != "bye" {
			t.Errorf("the upstream received %q after its end of stream, want bye", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("the upstream never saw the client's end of stream")
	}
}

func TestPlainHTTPStreams(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A known length: the proxy must flush on its own, not only for
		// chunked answers.
		w.Header().Set("Content-Length", strconv.Itoa(len("first "+r.URL.Path+"\n"+"second\n")))
		io.WriteString(w, "first "+r.URL.Path+"\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "second\n")
	}))
	defer up.Close()
	defer free()
	_, proxy := loopbackProxy(t, portOf(t, up.Listener.Addr().String()), true)

	resp, err := proxyClient(proxy).Get("http://allowed.test:" + strconv.Itoa(portOf(t, up.Listener.Addr().String())) + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first := make(chan string, 1)
	go func() {
		s, _ := br.ReadString('\n')
		first <- s
	}()
	select {
	case s := <-first:
		if s != "first /stream\n" {
			t.Fatalf("first chunk %q, want %q", s, "first /stream\n")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first chunk did not arrive while the upstream held the rest: the proxy buffers")
	}
	free()
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "second\n" {
		t.Errorf("rest = %q, %v; want %q", rest, err, "second\n")
	}
}

func TestRefusalAnswerAndRecord(t *testing.T) {
	p, proxy := loopbackProxy(t, 443, true)
	before := time.Now()

	_, _, resp := connect(t, proxy, "denied.test:443", "")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("status %d, want 403", resp.StatusCode)
	}
	if h := resp.Header.Get("X-Claude-Sandbox-Denied"); h != "not in the allowlist" {
		t.Errorf("X-Claude-Sandbox-Denied = %q, want %q", h, "not in the allowlist")
	}
	if want := "claude-sandbox: denied.test:443 refused: not in the allowlist\n"; string(body) != want {
		t.Errorf("body %q, want %q", body, want)
	}

	ds, err := Recent(p.Log.Path, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 {
		t.Fatalf("recorded %d denials, want 1: %+v", len(ds), ds)
	}
	d := ds[0]
	if d.Host != "denied.test" || d.Port != 443 || d.Reason != "not in the allowlist" || d.Workspace != "/work/proj" || d.Time.Before(before.Add(-time.Second)) {
		t.Errorf("recorded %+v", d)
	}
}

func TestLoopbackNeedsAllowIP(t *testing.T) {
	var hits int
	var mu sync.Mutex
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	}))
	defer up.Close()
	port := portOf(t, up.Listener.Addr().String())
	p, proxy := loopbackProxy(t, port, false)
	target := "allowed.test:" + strconv.Itoa(port)
	const reason = "resolves to loopback address 127.0.0.1"

	_, _, resp := connect(t, proxy, target, "")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Claude-Sandbox-Denied") != reason {
		t.Errorf("CONNECT: %s, reason %q; want 403, %q", resp.Status, resp.Header.Get("X-Claude-Sandbox-Denied"), reason)
	}
	resp, err := proxyClient(proxy).Get("http://" + target + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Claude-Sandbox-Denied") != reason {
		t.Errorf("GET: %s, reason %q; want 403, %q", resp.Status, resp.Header.Get("X-Claude-Sandbox-Denied"), reason)
	}
	resp, err = proxyClient(proxy).Get("http://127.0.0.1:" + strconv.Itoa(port) + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Claude-Sandbox-Denied") != "IP address not in allow-ip" {
		t.Errorf("GET by address: %s, reason %q; want 403, IP address not in allow-ip", resp.Status, resp.Header.Get("X-Claude-Sandbox-Denied"))
	}
	if hits != 0 {
		t.Errorf("the upstream was reached %d times", hits)
	}
	if ds, _ := Recent(p.Log.Path, 10); len(ds) != 3 {
		t.Errorf("recorded %d denials, want 3", len(ds))
	}
}

func TestHopAndProxyHeadersNotForwarded(t *testing.T) {
	got := make(chan http.Header, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
	}))
	defer up.Close()
	port := strconv.Itoa(portOf(t, up.Listener.Addr().String()))
	_, proxy := loopbackProxy(t, portOf(t, up.Listener.Addr().String()), true)

	req, _ := http.NewRequest(http.MethodGet, "http://allowed.test:"+port+"/", nil)
	req.Header.Set("Proxy-Authorization", "Basic c2VjcmV0OnNlY3JldA==")
	req.Header.Set("Proxy-Secret", "s")
	req.Header.Set("Connection", "X-Hop")
	req.Header.Set("X-Hop", "h")
	req.Header.Set("X-Kept", "k")
	resp, err := proxyClient(proxy).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var h http.Header
	select {
	case h = <-got:
	default:
		t.Fatalf("the request did not reach the upstream: %s", resp.Status)
	}
	for _, k := range []string{"Proxy-Authorization", "Proxy-Secret", "X-Hop"} {
		if v := h.Get(k); v != "" {
			t.Errorf("%s reached the upstream: %q", k, v)
		}
	}
	if h.Get("X-Kept") != "k" {
		t.Errorf("X-Kept did not reach the upstream: %v", h)
	}
}

func TestNotAProxyRequest(t *testing.T) {
	p, proxy := loopbackProxy(t, 443, true)
	resp, err := http.Get("http://" + proxy + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "absolute http:// URLs") {
		t.Errorf("origin-form GET: %s %q; want 400 with an explanation", resp.Status, body)
	}
	for _, target := range []string{"allowed.test", "allowed.test:99999", "allowed.test:http", ":443"} {
		_, _, resp = connect(t, proxy, target, "")
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("CONNECT %s: %s, want 400", target, resp.Status)
		}
	}
	// https goes through CONNECT; the proxy makes no TLS connections itself.
	for _, u := range []string{"https://allowed.test/", "ftp://allowed.test/"} {
		_, _, resp = send(t, proxy, "GET "+u+" HTTP/1.1\r\nHost: allowed.test\r\n\r\n", http.MethodGet)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s: %s, want 400", u, resp.Status)
		}
	}
	if ds, _ := Recent(p.Log.Path, 10); len(ds) != 0 {
		t.Errorf("malformed requests were recorded as denials: %+v", ds)
	}
}

func TestDialsCheckedAddressesInOrder(t *testing.T) {
	var mu sync.Mutex
	var dialed []string
	p := &Proxy{
		Policy:  Policy{Domains: []hostaddr.Domain{{Host: "far.test"}}},
		Resolve: fakeDNS(map[string][]string{"far.test": {"93.184.216.34", "10.9.9.9", "2606:4700::1111"}}),
		Dial: func(_ context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, network+" "+addr)
			mu.Unlock()
			return nil, errors.New("unreachable in this test")
		},
		Log: &Log{Path: filepath.Join(t.TempDir(), "denials.log")},
	}
	proxy := startProxy(t, p)

	_, _, resp := connect(t, proxy, "far.test:443", "")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(resp.Header.Get("X-Claude-Sandbox-Denied"), "unreachable in this test") {
		t.Errorf("CONNECT: %s, reason %q; want 502 naming the dial error", resp.Status, resp.Header.Get("X-Claude-Sandbox-Denied"))
	}
	resp, err := proxyClient(proxy).Get("http://far.test/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.HasPrefix(string(body), "claude-sandbox: far.test:80 refused: ") {
		t.Errorf("GET: %s %q; want 502 with the refusal body", resp.Status, body)
	}
	// The private answer is dropped; the name is never dialed.
	want := []string{"tcp 93.184.216.34:443", "tcp [2606:4700::1111]:443", "tcp 93.184.216.34:80", "tcp [2606:4700::1111]:80"}
	if !slices.Equal(dialed, want) {
		t.Errorf("dialed %v, want %v", dialed, want)
	}
	if ds, _ := Recent(p.Log.Path, 10); len(ds) != 0 {
		t.Errorf("dial failures were recorded as denials: %+v", ds)
	}
}

// frontEnd plays a shared front end on loopback, such as a CDN's edge,
// which serves many sites from one address and routes plain HTTP by its
// Host: it answers with the Host it was asked for. A request that asks to
// switch protocols gets 101, after which the front end reads the next line
// raw, as a connection of the new protocol would carry it.
func frontEnd(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up := r.Header.Get("Upgrade")
		if up == "" {
			io.WriteString(w, "SITE "+r.Host)
			return
		}
		c, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+up+"\r\n\r\n")
		line, _ := buf.ReadString('\n')
		io.WriteString(c, "AFTER "+up+" "+line)
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// frontEndProxy allows edge.test as a line without a port and open80.test
// with port 80, both on the front end: port 80 of 127.0.0.1 is dialled at
// the front end's address.
func frontEndProxy(t *testing.T) (*Proxy, string) {
	t.Helper()
	edge := frontEnd(t)
	p := &Proxy{
		Policy: Policy{
			Domains: []hostaddr.Domain{{Host: "edge.test"}, {Host: "open80.test", Port: 80}},
			IPs:     []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		},
		Resolve: fakeDNS(map[string][]string{"edge.test": {"127.0.0.1"}, "open80.test": {"127.0.0.1"}}),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr != "127.0.0.1:80" {
				return nil, errors.New("only port 80 in this test")
			}
			return (&net.Dialer{}).DialContext(ctx, network, edge)
		},
		Log: &Log{Path: filepath.Join(t.TempDir(), "denials.log")},
	}
	return p, startProxy(t, p)
}

// Plain HTTP in a tunnel names whatever host the client writes inside, and
// a front end routes by it: a line without a port does not open port 80 to
// tunnels, only to plain requests, whose Host the proxy writes itself. A
// line that names port 80 opens it to both.
func TestTunnelToPort80(t *testing.T) {
	p, proxy := frontEndProxy(t)
	inner := "GET / HTTP/1.1\r\nHost: other-site.test\r\nConnection: close\r\n\r\n"

	_, _, resp := connect(t, proxy, "edge.test:80", inner)
	const reason = "a tunnel to port 80 needs allow-domain = edge.test:80; plain http:// requests (GET http://edge.test/) go through without it"
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(DeniedHeader) != reason {
		t.Errorf("CONNECT edge.test:80: %s %q, want 403 %q", resp.Status, resp.Header.Get(DeniedHeader), reason)
	}
	if ds, _ := Recent(p.Log.Path, 10); len(ds) != 1 || ds[0].Host != "edge.test" || ds[0].Port != 80 || ds[0].Reason != reason {
		t.Errorf("denials %+v, want the tunnel to edge.test:80", ds)
	}

	_, br, resp := connect(t, proxy, "open80.test:80", inner)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT open80.test:80: %s, want 200 (its line names port 80)", resp.Status)
	}
	in, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(in.Body)
	if string(body) != "SITE other-site.test" {
		t.Errorf("through the tunnel the front end answered %q", body)
	}
}

// A plain request reaches the host the proxy checked, whatever Host header
// the client adds, and may switch protocols only to a WebSocket, which
// stays with that host: after a switch to HTTP/2 (h2c) every request would
// name a host of its own, unread by the proxy.
func TestPlainRequestKeepsCheckedHost(t *testing.T) {
	_, proxy := frontEndProxy(t)
	ask := func(extra string) (*http.Response, string) {
		t.Helper()
		c, br, resp := send(t, proxy, "GET http://edge.test/ HTTP/1.1\r\nHost: other-site.test\r\n"+extra+"\r\n", http.MethodGet)
		if resp.StatusCode == http.StatusSwitchingProtocols {
			io.WriteString(c, "GET / HTTP/1.1\n")
			line, _ := br.ReadString('\n')
			return resp, line
		}
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	if resp, body := ask("Connection: close\r\n"); resp.StatusCode != http.StatusOK || body != "SITE edge.test" {
		t.Errorf("GET http://edge.test/ with Host: other-site.test: %s %q, want the front end to see edge.test", resp.Status, body)
	}
	if resp, body := ask("Connection: Upgrade\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n"); resp.StatusCode != http.StatusOK || body != "SITE edge.test" {
		t.Errorf("GET with Upgrade: h2c: %s %q, want an answer without the switch", resp.Status, body)
	}
	if resp, line := ask("Connection: Upgrade\r\nUpgrade: websocket\r\n"); resp.StatusCode != http.StatusSwitchingProtocols || line != "AFTER websocket GET / HTTP/1.1\n" {
		t.Errorf("GET with Upgrade: websocket: %s %q, want the switch carried", resp.Status, line)
	}
}
