package upstreamproxy

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/upstreamproxy/proxytest"
)

func TestFromEnviron(t *testing.T) {
	s, err := FromEnviron(launchenv.Read([]string{"https_proxy=http://low:1", "HTTPS_PROXY=http://u:secret@proxy.corp:8080", "http_proxy=proxy.corp", "no_proxy=.internal,10.0.0.0/8"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.HTTPS.Var != "HTTPS_PROXY" || s.HTTPS.Addr != "proxy.corp:8080" {
		t.Errorf("HTTPS = %+v, want HTTPS_PROXY's proxy.corp:8080 (the upper-case form first)", s.HTTPS)
	}
	if s.HTTP.Var != "http_proxy" || s.HTTP.Addr != "proxy.corp:80" {
		t.Errorf("HTTP = %+v, want http_proxy's proxy.corp:80 (no scheme means http, no port 80)", s.HTTP)
	}
	if d := s.Describe(); strings.Contains(d, "secret") || strings.Contains(d, "u:") || !strings.Contains(d, "with credentials (not shown)") {
		t.Errorf("Describe() = %q: it must say credentials are given without showing them", d)
	}
	if got := (&Settings{}).Describe(); got != "none: the launcher's proxies connect directly" {
		t.Errorf("no proxy: Describe() = %q", got)
	}
}

func TestFromEnvironRefuses(t *testing.T) {
	for env, want := range map[string]string{
		"HTTPS_PROXY=socks5://u:secret@h:1080": "HTTPS_PROXY is a socks5:// proxy; the launcher reaches an upstream proxy over http:// only (http://[USER:PASSWORD@]HOST:PORT)",
		"https_proxy=http://u:secret@:8080":    "https_proxy is not a proxy URL (http://[USER:PASSWORD@]HOST:PORT)",
		"HTTP_PROXY=http://u:secret@h:99999":   "HTTP_PROXY has no valid port (http://[USER:PASSWORD@]HOST:PORT)",
		"HTTP_PROXY=http://u:secret@h:8/p":     "HTTP_PROXY has a path; a proxy URL is http://[USER:PASSWORD@]HOST:PORT",
		"NO_PROXY=a.corp:0":                    `NO_PROXY: "a.corp:0" has no valid port`,
	} {
		_, err := FromEnviron(launchenv.Read([]string{env}))
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", env, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the password: %v", env, err)
		}
	}
}

func TestNoProxy(t *testing.T) {
	s, err := FromEnviron(launchenv.Read([]string{"HTTPS_PROXY=http://p:3128", "NO_PROXY=corp.example, .sub.example,10.0.0.0/8,192.0.2.7,git.example:8443,*.wild.example"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host    string
		port    int
		proxied bool
	}{
		{"github.com", 443, true},
		{"corp.example", 443, false},
		{"a.corp.example", 443, false}, // a name exempts its subdomains
		{"notcorp.example", 443, true},
		{"sub.example", 443, true}, // ".sub.example": subdomains only
		{"a.sub.example", 443, false},
		{"10.1.2.3", 443, false},
		{"11.1.2.3", 443, true},
		{"192.0.2.7", 80, false},
		{"git.example", 8443, false},
		{"git.example", 443, true}, // the exemption names a port
		{"a.wild.example", 443, false},
		{"127.0.0.1", 443, false}, // loopback is always direct
		{"::1", 443, false},
		{"localhost", 443, false},
		{"CORP.EXAMPLE.", 443, false},
	} {
		if got := s.ForTunnel(c.host, c.port) != nil; got != c.proxied {
			t.Errorf("ForTunnel(%s, %d) proxied = %v, want %v", c.host, c.port, got, c.proxied)
		}
	}
	all, _ := FromEnviron(launchenv.Read([]string{"HTTPS_PROXY=http://p:3128", "no_proxy=*"}))
	if all.ForTunnel("github.com", 443) != nil {
		t.Error(`NO_PROXY=* must exempt every host`)
	}
	if (&Settings{}).ForTunnel("github.com", 443) != nil || (*Settings)(nil).ForHTTP("github.com", 80) != nil {
		t.Error("without a proxy every connection is direct")
	}
}

// origin answers every connection with a greeting first, as ssh does, then
// echoes a line.
func origin(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, "HELLO\n")
				io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

func upstream(t *testing.T, user, password string) (*proxytest.Server, string) {
	s := &proxytest.Server{User: user, Password: password, Origin: origin(t)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go s.Serve(l)
	return s, l.Addr().String()
}

func TestTunnel(t *testing.T) {
	srv, addr := upstream(t, "alice", "pa:ss")
	direct := (&net.Dialer{}).DialContext
	settings, err := FromEnviron(launchenv.Read([]string{"HTTPS_PROXY=http://alice:pa%3Ass@" + addr}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := settings.Dialer(direct)(context.Background(), "tcp", "registry.example:22")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "ping\n")
	c.(interface{ CloseWrite() error }).CloseWrite()
	got, _ := io.ReadAll(c)
	c.Close()
	if string(got) != "HELLO\nping\n" {
		t.Errorf("through the tunnel: %q, want the greeting sent with the proxy's answer, then the echo", got)
	}
	if log := srv.Log(); len(log) != 1 || log[0] != "CONNECT registry.example:22 auth=ok" {
		t.Errorf("the upstream proxy carried %q, want one CONNECT by name with the credentials", log)
	}

	for env, want := range map[string]string{
		"HTTPS_PROXY=http://alice:wrong@" + addr: "the upstream proxy (HTTPS_PROXY) refused the credentials HTTPS_PROXY names (407 Proxy Authentication Required)",
		"HTTPS_PROXY=http://" + addr:             "the upstream proxy (HTTPS_PROXY) asks for credentials (407 Proxy Authentication Required), and HTTPS_PROXY names none: write http://USER:PASSWORD@HOST:PORT",
		"HTTPS_PROXY=http://alice:x@127.0.0.1:1": "cannot reach the upstream proxy (HTTPS_PROXY): connect: connection refused",
	} {
		s, _ := FromEnviron(launchenv.Read([]string{env}))
		_, err := Tunnel(context.Background(), direct, s.HTTPS, "registry.example:443")
		if err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %q", env, err, want)
		}
	}
}

// What reaches the sandbox of an upstream proxy's failure names the
// variable and a status code, never what the proxy wrote (its reason
// phrase, a line that is not HTTP) nor its name from a failed lookup.
func TestTunnelErrorsNameNothingOfTheProxy(t *testing.T) {
	s := &proxytest.Server{Origin: origin(t), Refuse: "refused.example", NotHTTP: "garbled.example"}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go s.Serve(l)
	settings, err := FromEnviron(launchenv.Read([]string{"HTTPS_PROXY=http://" + proxytest.Name + ":3128"}))
	if err != nil {
		t.Fatal(err)
	}
	// The proxy is named by its host name; the dialer serves it from
	// loopback, or fails its lookup as a resolver would.
	dial := func(_ context.Context, network, addr string) (net.Conn, error) {
		if addr != proxytest.Name+":3128" {
			t.Errorf("dialled %s, want the proxy", addr)
		}
		return net.Dial(network, l.Addr().String())
	}
	noName := func(_ context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: proxytest.Name, Server: "10.9.9.9:53", IsNotFound: true}}
	}
	for _, c := range []struct {
		dial   DialFunc
		target string
		want   string
	}{
		{dial, "refused.example:443", "the upstream proxy (HTTPS_PROXY) refused: 403 Forbidden"},
		{dial, "garbled.example:443", "the upstream proxy (HTTPS_PROXY) answered CONNECT with something other than HTTP"},
		{noName, "registry.example:443", "cannot reach the upstream proxy (HTTPS_PROXY): its name does not resolve"},
	} {
		_, err := Tunnel(context.Background(), c.dial, settings.HTTPS, c.target)
		var pe *Error
		if err == nil || err.Error() != c.want || !errors.As(err, &pe) {
			t.Errorf("CONNECT %s: error %v, want the *Error %q", c.target, err, c.want)
		}
	}
}
