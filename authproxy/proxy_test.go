package authproxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
)

const placeholder = "claude-sandbox-session-0123456789abcdef0123456789abcdef"

// deadlock bounds the streaming tests, which would otherwise hang when the
// proxy buffers.
const deadlock = 10 * time.Second

// upstream is a stand-in API that records what reached it.
type upstream struct {
	*httptest.Server
	mu    sync.Mutex
	seen  []*http.Request // with Header, Host and RequestURI as received
	calls atomic.Int32
}

func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.calls.Add(1)
		u.mu.Lock()
		u.seen = append(u.seen, &http.Request{Header: r.Header.Clone(), Host: r.Host, RequestURI: r.RequestURI})
		u.mu.Unlock()
		if h != nil {
			h(w, r)
		}
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) last(t *testing.T) *http.Request {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.seen) == 0 {
		t.Fatal("the upstream got no request")
	}
	return u.seen[len(u.seen)-1]
}

// startProxy serves c in front of upstreamURL and returns the proxy's base
// URL.
func startProxy(t *testing.T, c *authproxy.Credential, upstreamURL, tokenURL string) (string, *authproxy.Server) {
	t.Helper()
	u, err := url.Parse(upstreamURL)
	if err != nil {
		t.Fatal(err)
	}
	s := &authproxy.Server{Upstream: u, Credential: c, Placeholder: placeholder, TokenURL: tokenURL}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(l)
	t.Cleanup(func() { l.Close() })
	return "http://" + l.Addr().String(), s
}

func mustFind(t *testing.T, environ []string, home string) *authproxy.Credential {
	t.Helper()
	c, err := authproxy.Find(launchenv.Read(environ), home)
	if err != nil || c == nil {
		t.Fatalf("Find = %v, %v", c, err)
	}
	return c
}

// send makes a request with the given headers and returns the answer with
// its body read.
func send(t *testing.T, method, url string, header http.Header, body io.Reader) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func bearer(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

// forwarded is the credential the upstream gets for one request through c.
func forwarded(t *testing.T, c *authproxy.Credential) string {
	t.Helper()
	up := newUpstream(t, nil)
	base, _ := startProxy(t, c, up.URL, "")
	send(t, "POST", base+"/v1/messages", bearer(placeholder), strings.NewReader("{}"))
	h := up.last(t).Header
	if k := h.Get("X-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(h.Get("Authorization"), "Bearer ")
}

func TestForwardsCredential(t *testing.T) {
	for _, tc := range []struct {
		environ      []string
		header, want string
	}{
		{[]string{"ANTHROPIC_API_KEY=sk-ant-api03-real"}, "X-Api-Key", "sk-ant-api03-real"},
		{[]string{"ANTHROPIC_AUTH_TOKEN=gateway-real"}, "Authorization", "Bearer gateway-real"},
		{[]string{"CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-real"}, "Authorization", "Bearer sk-ant-oat01-real"},
	} {
		for _, presented := range []http.Header{bearer(placeholder), {"X-Api-Key": {placeholder}}} {
			c := mustFind(t, tc.environ, t.TempDir())
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Upstream", "yes")
				w.WriteHeader(http.StatusCreated)
				io.WriteString(w, "answer")
			})
			base, _ := startProxy(t, c, up.URL, "")
			resp, body := send(t, "POST", base+"/v1/messages", presented, strings.NewReader("{}"))
			if resp.StatusCode != http.StatusCreated || body != "answer" || resp.Header.Get("X-Upstream") != "yes" {
				t.Errorf("%v: the client got %s %q %v, not the upstream's answer", c, resp.Status, body, resp.Header)
			}
			seen := up.last(t)
			if got := seen.Header.Get(tc.header); got != tc.want {
				t.Errorf("%v: the upstream's %s is %q, want %q", c, tc.header, got, tc.want)
			}
			if n := len(seen.Header.Values("Authorization")) + len(seen.Header.Values("X-Api-Key")); n != 1 {
				t.Errorf("%v: the upstream got %d credential headers, want 1: %v", c, n, seen.Header)
			}
			for k, vs := range seen.Header {
				for _, v := range vs {
					if strings.Contains(v, placeholder) {
						t.Errorf("%v: the upstream got the placeholder in %s", c, k)
					}
				}
			}
			if want := strings.TrimPrefix(up.URL, "http://"); seen.Host != want {
				t.Errorf("%v: the upstream got Host %q, want %q", c, seen.Host, want)
			}
		}
	}
}

func TestRefusesWithoutPlaceholder(t *testing.T) {
	c := mustFind(t, []string{"ANTHROPIC_API_KEY=sk-ant-api03-real"}, t.TempDir())
	up := newUpstream(t, nil)
	base, _ := startProxy(t, c, up.URL, "")
	for name, h := range map[string]http.Header{
		"nothing":             {},
		"wrong token":         bearer("claude-sandbox-session-ffffffffffffffffffffffffffffffff"),
		"longer":              bearer(placeholder + "0"),
		"shorter":             bearer(placeholder[:len(placeholder)-1]),
		"empty bearer":        {"Authorization": {"Bearer "}},
		"other scheme":        {"Authorization": {"Basic " + placeholder}},
		"no scheme":           {"Authorization": {placeholder}},
		"proxy authorization": {"Proxy-Authorization": {"Bearer " + placeholder}},
		"the real key":        {"X-Api-Key": {"sk-ant-api03-real"}},
	} {
		resp, body := send(t, "POST", base+"/v1/messages", h, strings.NewReader("{}"))
		var answer struct {
			Type  string
			Error struct{ Type, Message string }
		}
		if resp.StatusCode != http.StatusUnauthorized || json.Unmarshal([]byte(body), &answer) != nil ||
			answer.Type != "error" || answer.Error.Type != "authentication_error" || !strings.Contains(answer.Error.Message, "claude-sandbox") {
			t.Errorf("%s: got %s %s; want 401 with an API error from claude-sandbox", name, resp.Status, body)
		}
	}
	if n := up.calls.Load(); n != 0 {
		t.Errorf("the upstream was called %d times for refused requests", n)
	}
}

func TestServeNeedsPlaceholder(t *testing.T) {
	u, _ := url.Parse("https://api.anthropic.com")
	c := mustFind(t, []string{"ANTHROPIC_API_KEY=k"}, t.TempDir())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Empty strings compare equal in constant time: an empty placeholder
	// would let an empty x-api-key through.
	if err := (&authproxy.Server{Upstream: u, Credential: c}).Serve(l); err == nil {
		t.Error("Serve ran without a placeholder")
	}
}

func TestOAuthBeta(t *testing.T) {
	for _, tc := range []struct {
		environ []string
		in      []string
		want    string
	}{
		{[]string{"CLAUDE_CODE_OAUTH_TOKEN=t"}, nil, "oauth-2025-04-20"},
		{[]string{"CLAUDE_CODE_OAUTH_TOKEN=t"}, []string{"claude-code-20250219,fine-grained-tool-streaming-2025-05-14"}, "claude-code-20250219,fine-grained-tool-streaming-2025-05-14,oauth-2025-04-20"},
		{[]string{"CLAUDE_CODE_OAUTH_TOKEN=t"}, []string{"claude-code-20250219, oauth-2025-04-20"}, "claude-code-20250219, oauth-2025-04-20"},
		{[]string{"CLAUDE_CODE_OAUTH_TOKEN=t"}, []string{"a", "b"}, "a,b,oauth-2025-04-20"},
		{[]string{"ANTHROPIC_API_KEY=k"}, []string{"claude-code-20250219"}, "claude-code-20250219"},
		{[]string{"ANTHROPIC_AUTH_TOKEN=g"}, nil, ""},
	} {
		c := mustFind(t, tc.environ, t.TempDir())
		up := newUpstream(t, nil)
		base, _ := startProxy(t, c, up.URL, "")
		h := bearer(placeholder)
		if tc.in != nil {
			h["Anthropic-Beta"] = tc.in
		}
		send(t, "POST", base+"/v1/messages", h, strings.NewReader("{}"))
		if got := strings.Join(up.last(t).Header.Values("Anthropic-Beta"), "|"); got != tc.want {
			t.Errorf("%v with anthropic-beta %q: the upstream got %q, want %q", c, tc.in, got, tc.want)
		}
	}
}

func TestPathPrefixKept(t *testing.T) {
	c := mustFind(t, []string{"ANTHROPIC_AUTH_TOKEN=g"}, t.TempDir())
	up := newUpstream(t, nil)
	base, _ := startProxy(t, c, up.URL+"/gateway/anthropic", "")
	send(t, "POST", base+"/v1/messages?beta=true", bearer(placeholder), strings.NewReader("{}"))
	if got, want := up.last(t).RequestURI, "/gateway/anthropic/v1/messages?beta=true"; got != want {
		t.Errorf("the upstream got %s, want %s", got, want)
	}
}

func TestHopByHopDropped(t *testing.T) {
	c := mustFind(t, []string{"ANTHROPIC_AUTH_TOKEN=g"}, t.TempDir())
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "X-Upstream-Private")
		w.Header().Set("X-Upstream-Private", "1")
	})
	base, _ := startProxy(t, c, up.URL, "")
	h := bearer(placeholder)
	h.Set("Connection", "X-Sandbox-Private")
	h.Set("X-Sandbox-Private", "1")
	h.Set("Proxy-Authorization", "Basic c2VjcmV0")
	resp, _ := send(t, "POST", base+"/v1/messages", h, strings.NewReader("{}"))
	seen := up.last(t).Header
	for _, k := range []string{"X-Sandbox-Private", "Proxy-Authorization"} {
		if seen.Get(k) != "" {
			t.Errorf("the upstream got the hop-by-hop header %s", k)
		}
	}
	if resp.Header.Get("X-Upstream-Private") != "" {
		t.Error("the client got the upstream's hop-by-hop header X-Upstream-Private")
	}
}

func TestStreamsEvents(t *testing.T) {
	read := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: one\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-read: // only once the client has the first event
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "event: two\ndata: {}\n\n")
	})
	c := mustFind(t, []string{"ANTHROPIC_AUTH_TOKEN=g"}, t.TempDir())
	base, _ := startProxy(t, c, up.URL, "")
	ctx, cancel := context.WithTimeout(context.Background(), deadlock)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/messages", strings.NewReader(`{"stream":true}`))
	req.Header = bearer(placeholder)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var first strings.Builder
	for !strings.HasSuffix(first.String(), "\n\n") {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the first event did not arrive before the second was sent (%v): the proxy buffers", err)
		}
		first.WriteString(line)
	}
	close(read)
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if first.String() != "event: one\ndata: {}\n\n" || string(rest) != "event: two\ndata: {}\n\n" {
		t.Errorf("got %q then %q", first.String(), rest)
	}
}

func TestStreamsRequestBody(t *testing.T) {
	part1, part2 := strings.Repeat("a", 1000), strings.Repeat("b", 1000)
	gotFirst := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, len(part1))
		if _, err := io.ReadFull(r.Body, buf); err != nil || string(buf) != part1 {
			t.Errorf("the upstream read %q, %v", buf, err)
			return
		}
		close(gotFirst)
		rest, _ := io.ReadAll(r.Body)
		io.WriteString(w, string(rest))
	})
	c := mustFind(t, []string{"ANTHROPIC_AUTH_TOKEN=g"}, t.TempDir())
	base, _ := startProxy(t, c, up.URL, "")
	ctx, cancel := context.WithTimeout(context.Background(), deadlock)
	defer cancel()
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(part1))
		select {
		case <-gotFirst: // the second part only once the upstream has the first
		case <-ctx.Done():
		}
		pw.Write([]byte(part2))
		pw.Close()
	}()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/messages", pr)
	req.Header = bearer(placeholder)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-gotFirst:
	default:
		t.Fatal("the upstream did not get the first part before the second was sent: the proxy buffers")
	}
	if string(body) != part2 {
		t.Errorf("the upstream read %d bytes after the first part, want %d", len(body), len(part2))
	}
}

func TestAnswerBeforeRequestBody(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		io.WriteString(w, "event: one\n\n")
		w.(http.Flusher).Flush()
		body, _ := io.ReadAll(r.Body)
		io.WriteString(w, "got "+string(body))
	})
	c := mustFind(t, []string{"ANTHROPIC_AUTH_TOKEN=g"}, t.TempDir())
	base, _ := startProxy(t, c, up.URL, "")
	ctx, cancel := context.WithTimeout(context.Background(), deadlock)
	defer cancel()
	pr, pw := io.Pipe()
	answered := make(chan struct{})
	go func() {
		select {
		case <-answered: // the body only once the answer has begun
		case <-ctx.Done():
		}
		pw.Write([]byte("late body"))
		pw.Close()
	}()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/messages", pr)
	req.Header = bearer(placeholder)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "event: one\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	close(answered)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\ngot late body" {
		t.Errorf("then %q, %v; want the upstream to get the body sent after its answer began", rest, err)
	}
}

func TestUpstreamUnreachable(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	c := mustFind(t, []string{"ANTHROPIC_API_KEY=sk-ant-api03-real"}, t.TempDir())
	base, _ := startProxy(t, c, gone.URL, "")
	resp, body := send(t, "POST", base+"/v1/messages", bearer(placeholder), strings.NewReader("{}"))
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, `"type":"error"`) || !strings.Contains(body, "claude-sandbox") {
		t.Errorf("got %s %s; want 502 with an API error from claude-sandbox", resp.Status, body)
	}
	if strings.Contains(body, "sk-ant-api03-real") {
		t.Error("the error shows the credential")
	}
}

func TestNewPlaceholder(t *testing.T) {
	a, b := authproxy.NewPlaceholder(), authproxy.NewPlaceholder()
	if !regexp.MustCompile(`^claude-sandbox-session-[0-9a-f]{32}$`).MatchString(a) {
		t.Errorf("NewPlaceholder() = %q", a)
	}
	if a == b {
		t.Errorf("two placeholders are both %q", a)
	}
}

// raw sends a request line as written, with the session token, and
// returns the status code and the whole answer.
func raw(t *testing.T, base, method, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(deadlock))
	io.WriteString(c, method+" "+target+" HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer "+placeholder+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	got, _ := io.ReadAll(c)
	var code int
	fmt.Sscanf(string(got), "HTTP/1.1 %d", &code)
	return code, string(got)
}

// The credential goes only with the API's methods, to paths that stay
// under the upstream's prefix: a gateway that echoes TRACE would hand the
// key back, and one that normalises dot segments would take the key to
// its own paths outside the prefix.
func TestForwardsOnlyTheAPIsMethodsAndPaths(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		// An upstream that answers TRACE with the request, as RFC 9110
		// describes, and anything else with where it arrived.
		if r.Method == http.MethodTrace {
			w.Header().Set("Content-Type", "message/http")
			fmt.Fprintf(w, "TRACE %s\nX-Api-Key: %s\n", r.RequestURI, r.Header.Get("X-Api-Key"))
			return
		}
		io.WriteString(w, r.Method+" "+r.RequestURI)
	})
	base, _ := startProxy(t, mustFind(t, []string{"ANTHROPIC_API_KEY=sk-ant-api03-real"}, t.TempDir()), up.URL+"/gateway/anthropic", "")

	for _, c := range []struct{ method, target, want string }{
		{"POST", "/v1/messages?beta=true", "POST /gateway/anthropic/v1/messages?beta=true"},
		{"POST", "/v1/messages/count_tokens", "POST /gateway/anthropic/v1/messages/count_tokens"},
		{"GET", "/v1/models", "GET /gateway/anthropic/v1/models"},
		{"DELETE", "/v1/files/file_011CNha8iCJcU1wXNR6q4V8w", "DELETE /gateway/anthropic/v1/files/file_011CNha8iCJcU1wXNR6q4V8w"},
		{"HEAD", "/v1/models", ""},
	} {
		code, got := raw(t, base, c.method, c.target)
		if code != http.StatusOK || !strings.HasSuffix(got, "\r\n\r\n"+c.want) {
			t.Errorf("%s %s: %d, answer %q; want 200 and %q", c.method, c.target, code, got, c.want)
		}
	}
	calls := up.calls.Load()
	for _, c := range []struct {
		method, target string
		code           int
	}{
		{"TRACE", "/v1/messages", http.StatusMethodNotAllowed},
		{"CONNECT", "api.anthropic.com:443", http.StatusMethodNotAllowed},
		{"OPTIONS", "/v1/messages", http.StatusMethodNotAllowed},
		{"PUT", "/v1/messages", http.StatusMethodNotAllowed},
		{"PATCH", "/v1/messages", http.StatusMethodNotAllowed},
		{"GET", "/v1/../../admin", http.StatusBadRequest},
		{"GET", "/v1/%2e%2e/%2E%2E/admin", http.StatusBadRequest},
		{"GET", "/v1/.%2e/x", http.StatusBadRequest},
		{"GET", "/v1/..%2f..%2fadmin", http.StatusBadRequest},
		{"GET", "/v1/..%5c..%5cadmin", http.StatusBadRequest},
		{"GET", "/v1/..\\..\\admin", http.StatusBadRequest},
		{"GET", "/v1/..;/..;/admin", http.StatusBadRequest},
		{"GET", "/v1/%252e%252e/admin", http.StatusBadRequest},
		{"GET", "/./v1/models", http.StatusBadRequest},
		{"POST", "/v1/messages/..", http.StatusBadRequest},
		{"GET", "http://api.test/v1/../../admin", http.StatusBadRequest},
		{"GET", "//evil.test/v1/messages", http.StatusBadRequest},
		{"GET", "/v1//evil.test/x", http.StatusBadRequest},
		{"GET", "/%2F%2Fevil.test/x", http.StatusBadRequest},
		{"POST", "http://evil.test/v1/messages", http.StatusBadRequest},
	} {
		code, got := raw(t, base, c.method, c.target)
		if code != c.code || !strings.Contains(got, `"type":"invalid_request_error"`) || strings.Contains(got, "sk-ant-api03-real") {
			t.Errorf("%s %s: %d, answer %q; want %d with an API error and no credential", c.method, c.target, code, got, c.code)
		}
	}
	if n := up.calls.Load() - calls; n != 0 {
		t.Errorf("the upstream got %d refused requests", n)
	}
}
