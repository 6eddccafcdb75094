package authproxy_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/envproxy"
	"github.com/claude-sandbox/claude-sandbox/envproxy/proxytest"
)

// The credential proxy reaches the API through the launching environment's
// proxy, with that proxy's credentials, by the API's name; the login goes
// inside the tunnel.
func TestThroughUpstreamProxy(t *testing.T) {
	api := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "API") })
	corp := &proxytest.Server{User: "alice", Password: "s3cret", Origin: api.Listener.Addr().String()}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go corp.Serve(l)

	for _, c := range []struct{ creds, status, message string }{
		{"alice:s3cret@", "200 OK", ""},
		{"alice:wrong@", "502 Bad Gateway", "claude-sandbox: the credential proxy cannot reach http://api.example.test: the upstream proxy (HTTPS_PROXY) refused the credentials HTTPS_PROXY names (407 Proxy Authentication Required)"},
	} {
		settings, err := envproxy.FromEnviron([]string{"HTTPS_PROXY=http://" + c.creds + l.Addr().String()})
		if err != nil {
			t.Fatal(err)
		}
		s := &authproxy.Server{
			Upstream:    &url.URL{Scheme: "http", Host: "api.example.test"},
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
			t.Errorf("%s: %s %s, want %s %q", c.creds, resp.Status, body, c.status, c.message)
		}
		if strings.Contains(string(body), l.Addr().String()) || strings.Contains(string(body), "wrong") {
			t.Errorf("%s: the answer names the upstream proxy or its credentials: %s", c.creds, body)
		}
	}
	want := []string{"CONNECT api.example.test:80 auth=ok", "CONNECT api.example.test:80 auth=wrong -> 407"}
	if got := corp.Log(); !slices.Equal(got, want) {
		t.Errorf("the upstream proxy carried %q, want %q", got, want)
	}
	if got := api.last(t).Header.Get("X-Api-Key"); got != "sk-real" {
		t.Errorf("the API got x-api-key %q, want the real key", got)
	}
}
