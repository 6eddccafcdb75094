package authproxy_test

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/upstreamproxy"
	"github.com/claude-sandbox/claude-sandbox/upstreamproxy/proxytest"
)

// The credential proxy reaches the API through the launching environment's
// proxy, with that proxy's credentials, by the API's name; the login goes
// inside the tunnel. Of the proxy's refusals Claude learns the variable
// and the status code, nothing the proxy wrote.
func TestThroughUpstreamProxy(t *testing.T) {
	api := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "API") })
	corp := &proxytest.Server{User: "alice", Password: "s3cret", Origin: api.Listener.Addr().String(), Refuse: "refused.example.test", NotHTTP: "garbled.example.test"}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go corp.Serve(l)

	for _, c := range []struct{ creds, host, status, message string }{
		{"alice:s3cret@", "api.example.test", "200 OK", ""},
		{"alice:wrong@", "api.example.test", "502 Bad Gateway", "claude-sandbox: the credential proxy cannot reach http://api.example.test: the upstream proxy (HTTPS_PROXY) refused the credentials HTTPS_PROXY names (407 Proxy Authentication Required)"},
		{"alice:s3cret@", "refused.example.test", "502 Bad Gateway", "claude-sandbox: the credential proxy cannot reach http://refused.example.test: the upstream proxy (HTTPS_PROXY) refused: 403 Forbidden\""},
		{"alice:s3cret@", "garbled.example.test", "502 Bad Gateway", "claude-sandbox: the credential proxy cannot reach http://garbled.example.test: the upstream proxy (HTTPS_PROXY) answered CONNECT with something other than HTTP\""},
	} {
		settings, err := upstreamproxy.FromEnviron(launchenv.Read([]string{"HTTPS_PROXY=http://" + c.creds + l.Addr().String()}))
		if err != nil {
			t.Fatal(err)
		}
		s := &authproxy.Server{
			Upstream:    &url.URL{Scheme: "http", Host: c.host},
			Credential:  mustFind(t, []string{"ANTHROPIC_API_KEY=sk-real"}, t.TempDir()),
			Placeholder: placeholder,
			Dial:        settings.Dialer((&net.Dialer{}).DialContext),
		}
		pl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pl.Close() })
		go s.Serve(pl)
		req, _ := http.NewRequest("POST", "http://"+pl.Addr().String()+"/v1/messages", strings.NewReader("{}"))
		req.Header.Set("X-Api-Key", placeholder)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Status != c.status || c.message != "" && !strings.Contains(string(body), c.message) {
			t.Errorf("%s %s: %s %s, want %s %q", c.creds, c.host, resp.Status, body, c.status, c.message)
		}
		for _, secret := range []string{l.Addr().String(), proxytest.Name, "alice", "wrong"} {
			if strings.Contains(string(body), secret) {
				t.Errorf("%s %s: the answer names the upstream proxy or its credentials (%s): %s", c.creds, c.host, secret, body)
			}
		}
	}
	want := []string{"CONNECT api.example.test:80 auth=ok", "CONNECT api.example.test:80 auth=wrong -> 407", "CONNECT refused.example.test:80 auth=ok -> 403", "CONNECT garbled.example.test:80 auth=ok -> not HTTP"}
	if got := corp.Log(); !slices.Equal(got, want) {
		t.Errorf("the upstream proxy carried %q, want %q", got, want)
	}
	if got := api.last(t).Header.Get("X-Api-Key"); got != "sk-real" {
		t.Errorf("the API got x-api-key %q, want the real key", got)
	}
}

// A TLS certificate that does not verify is described, not quoted: behind
// a proxy that inspects TLS it is the proxy's, and its names and authority
// name the proxy. The test's server presents a certificate for example.com
// and 127.0.0.1 from the authority "Acme Co".
func TestCertificateErrorsNameNothing(t *testing.T) {
	inspecting := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "API") }))
	inspecting.Config.ErrorLog = log.New(io.Discard, "", 0)
	inspecting.StartTLS()
	t.Cleanup(inspecting.Close)
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, inspecting.Listener.Addr().String())
	}
	trusting := &http.Transport{DialContext: dial, TLSClientConfig: &tls.Config{RootCAs: inspecting.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}}
	for _, c := range []struct {
		s    authproxy.Server
		host string
		want string
	}{
		{authproxy.Server{Dial: dial}, "127.0.0.1", "its TLS certificate is signed by an unknown authority"},
		{authproxy.Server{Transport: trusting}, "api.example.test", "its TLS certificate is not valid for api.example.test"},
	} {
		s := c.s
		s.Upstream = &url.URL{Scheme: "https", Host: c.host}
		s.Credential = mustFind(t, []string{"ANTHROPIC_API_KEY=sk-real"}, t.TempDir())
		s.Placeholder = placeholder
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go s.Serve(l)
		resp, body := send(t, "POST", "http://"+l.Addr().String()+"/v1/messages", bearer(placeholder), strings.NewReader("{}"))
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "cannot reach https://"+c.host+": "+c.want+"\"") {
			t.Errorf("%s %s, want 502 %q", resp.Status, body, c.want)
		}
		for _, named := range []string{"example.com", "Acme"} {
			if strings.Contains(body, named) {
				t.Errorf("the answer quotes the certificate (%s): %s", named, body)
			}
		}
	}
}
