package forge

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

const testToken = "ghp_0123456789abcdefTOKEN0123456789abcdef"

// TestMaskForms: the token, user:token, and their base64 in both
// alphabets, whole and at every offset within a longer base64 text, are
// masked with as many bytes; text around them is kept.
func TestMaskForms(t *testing.T) {
	m := newMasker(secretForms("tester", testToken))
	cases := []string{
		testToken,
		"tester:" + testToken,
		"Basic " + base64.StdEncoding.EncodeToString([]byte("tester:"+testToken)),
		base64.URLEncoding.EncodeToString([]byte("tester:" + testToken)),
		base64.StdEncoding.EncodeToString([]byte(testToken)),
	}
	for k := range 3 {
		prefix := strings.Repeat("x", k+4)
		cases = append(cases, base64.StdEncoding.EncodeToString([]byte(prefix+testToken+"tail")))
		cases = append(cases, base64.URLEncoding.EncodeToString([]byte(prefix+"tester:"+testToken+"tail")))
	}
	for _, c := range cases {
		b := []byte("before " + c + " after")
		m.mask(b)
		if len(b) != len("before "+c+" after") {
			t.Fatalf("the mask changed the length")
		}
		if bytes.Contains(b, []byte(testToken)) || leaksToken(b) {
			t.Errorf("%q masked to %q: the token stays readable", c, b)
		}
		if !bytes.HasPrefix(b, []byte("before ")) || !bytes.HasSuffix(b, []byte(" after")) {
			t.Errorf("%q masked to %q: the text around it changed", c, b)
		}
	}
	// A header's credential, whole, is masked to its last character: not
	// a bit of it stays.
	for _, token := range []string{testToken, testToken + "1", testToken + "12"} {
		whole := []byte("Basic " + base64.StdEncoding.EncodeToString([]byte("tester:"+token)))
		newMasker(secretForms("tester", token)).mask(whole)
		if strings.Trim(string(whole[len("Basic "):]), "*") != "" {
			t.Errorf("the Basic header masked to %q", whole)
		}
	}
}

// leaksToken reports whether b decodes, at any base64 offset, to text
// holding the token's middle.
func leaksToken(b []byte) bool {
	mid := testToken[4 : len(testToken)-4]
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for _, f := range strings.FieldsFunc(string(b), func(r rune) bool { return r == ' ' || r == '*' }) {
			for i := range 4 {
				if i >= len(f) {
					break
				}
				s := f[i:]
				s = s[:len(s)/4*4]
				d, _ := enc.DecodeString(s)
				if strings.Contains(string(d), mid) {
					return true
				}
			}
		}
	}
	return false
}

// TestMaskedReaderSplit: a token cut across reads of one byte is masked.
func TestMaskedReaderSplit(t *testing.T) {
	m := newMasker(secretForms("tester", testToken))
	in := "head " + testToken + " middle " + testToken + " end"
	out, err := io.ReadAll(m.reader(io.NopCloser(iotest.OneByteReader(strings.NewReader(in)))))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), testToken) || len(out) != len(in) {
		t.Errorf("got %q", out)
	}
	if !strings.HasPrefix(string(out), "head ****") || !strings.HasSuffix(string(out), "**** end") {
		t.Errorf("got %q", out)
	}
}

// TestAuthorityConstraints: the authority's certificates verify for its
// hosts only; the name constraints refuse any other name the key signed.
func TestAuthorityConstraints(t *testing.T) {
	a, err := NewAuthority([]string{"forge.example"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Certificate("other.example"); err == nil {
		t.Error("the authority issued for a host it was not made for")
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(a.PEM())
	c, err := a.Certificate("forge.example")
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(c.Certificate[0])
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "forge.example"}); err != nil {
		t.Errorf("the forge's certificate does not verify: %v", err)
	}
	// The key signing another name (as a stolen key would): refused by
	// the constraint, which any client checks.
	a.hosts = append(a.hosts, "bank.example")
	other, err := a.Certificate("bank.example")
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ = x509.ParseCertificate(other.Certificate[0])
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "bank.example"}); err == nil {
		t.Error("a certificate for a name outside the constraints verifies")
	}
}

// forgeFixture is a forge over TLS that records what it got, and a Server
// in front of it, reached as the egress proxy hands it a tunnel.
type forgeFixture struct {
	got    chan *http.Request
	bodies chan string
	client *http.Client
}

func newFixture(t *testing.T, h http.HandlerFunc, gate PushGate, requests ...RequestGate) *forgeFixture {
	f := &forgeFixture{got: make(chan *http.Request, 8), bodies: make(chan string, 8)}
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.got <- r
		f.bodies <- string(b)
		h(w, r)
	}))
	t.Cleanup(upstream.Close)
	u, _ := url.Parse(upstream.URL)
	port, _ := strconv.Atoi(u.Port())
	a, err := NewAuthority([]string{"forge.example"})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(upstream.Certificate())
	s := &Server{
		Authority: a,
		Hosts:     []Host{{Name: "forge.example", Port: port, Credential: &Credential{Username: "tester", Password: testToken}}},
		Dial: func(ctx context.Context, host string, p int) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", u.Host)
		},
		Gate:    gate,
		RootCAs: roots,
	}
	if len(requests) > 0 {
		s.Requests = requests[0]
	}
	// upstream's certificate names example.com; the forge's name here is
	// forge.example, so the fixture's transport checks that name instead.
	s.init()
	for _, hp := range s.proxies {
		hp.transport.TLSClientConfig.ServerName = "example.com"
	}
	if !s.Terminates("forge.example", port) || s.Terminates("forge.example", port+1) || s.Terminates("other.example", port) {
		t.Fatal("Terminates names the wrong hosts")
	}
	inside := x509.NewCertPool()
	inside.AppendCertsFromPEM(a.PEM())
	f.client = &http.Client{
		Transport: &http.Transport{
			DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				c, p := net.Pipe()
				go s.ServeTunnel(p, "forge.example", port)
				tc := tls.Client(c, &tls.Config{ServerName: "forge.example", RootCAs: inside})
				return tc, tc.HandshakeContext(ctx)
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return f
}

// TestServerCredential: the sandbox's Authorization is dropped and the
// user's added; the request goes to the named host whatever Host it
// names, never asking for a part of the answer (as Basic on the forge's
// host, as Bearer on its API below /api/); the answer's headers and
// body carry the token masked, and no cookie; a redirect
// comes back as it is, not followed.
func TestServerCredential(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "https://elsewhere.example/x", http.StatusFound)
			return
		}
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "a-session-of-the-users"})
		io.WriteString(w, "you sent "+r.Header.Get("Authorization")+" and "+testToken)
	}, nil)
	req, _ := http.NewRequest("GET", "https://forge.example/repo.git/info/refs?service=git-upload-pack", nil)
	req.Header.Set("Authorization", "Bearer placeholder")
	req.Header.Set("Range", "bytes=10-20")
	req.Host = "evil.example"
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	r := <-f.got
	<-f.bodies
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("tester:"+testToken)); r.Header.Get("Authorization") != want {
		t.Errorf("the forge got Authorization %q", r.Header.Get("Authorization"))
	}
	if r.Header.Get("Range") != "" {
		t.Errorf("the forge was asked for a part of the answer, which could hold a part of the token: %q", r.Header.Get("Range"))
	}
	if r.Host == "evil.example" || r.URL.RawQuery != "service=git-upload-pack" {
		t.Errorf("the forge got Host %q, query %q", r.Host, r.URL.RawQuery)
	}
	if c := resp.Header.Values("Set-Cookie"); len(c) > 0 {
		t.Errorf("a cookie the forge set for the user's credential reached the sandbox: %q", c)
	}
	if strings.Contains(string(body), testToken) || strings.Contains(resp.Header.Get("X-Echo"), "dGVzdGVy") {
		t.Errorf("the token reached the sandbox: %q, %q", body, resp.Header.Get("X-Echo"))
	}
	// The forge's API below its host takes the token as Bearer (GitLab's
	// takes no Basic); GitLab's own token headers from the sandbox are
	// dropped like its Authorization.
	req, _ = http.NewRequest("GET", "https://forge.example/api/v4/user", nil)
	req.Header.Set("Private-Token", "placeholder")
	req.Header.Set("Job-Token", "placeholder")
	if resp, err = f.client.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r = <-f.got
	<-f.bodies
	if r.Header.Get("Authorization") != "Bearer "+testToken || r.Header.Get("Private-Token") != "" || r.Header.Get("Job-Token") != "" {
		t.Errorf("the forge's API got Authorization %q, Private-Token %q, Job-Token %q", r.Header.Get("Authorization"), r.Header.Get("Private-Token"), r.Header.Get("Job-Token"))
	}
	resp, err = f.client.Get("https://forge.example/redirect")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	<-f.got
	<-f.bodies
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "https://elsewhere.example/x" {
		t.Errorf("the redirect came back as %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	select {
	case r := <-f.got:
		t.Errorf("the proxy followed the redirect: %s", r.URL)
	default:
	}
}

// TestServerRefusesUnreadAnswers: an answer in a content coding the
// transport did not decode, and a protocol switch, do not reach the
// sandbox: the mask cannot read them.
func TestServerRefusesUnreadAnswers(t *testing.T) {
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/br" {
			w.Header().Set("Content-Encoding", "br")
			io.WriteString(w, testToken)
			return
		}
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		w.WriteHeader(http.StatusSwitchingProtocols)
	}, nil)
	for _, path := range []string{"/br", "/upgrade"} {
		req, _ := http.NewRequest("GET", "https://forge.example"+path, nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := <-f.got
		<-f.bodies
		if resp.StatusCode != http.StatusBadGateway || strings.Contains(string(body), testToken) {
			t.Errorf("%s: %d %q", path, resp.StatusCode, body)
		}
		if r.Header.Get("Upgrade") != "" {
			t.Errorf("%s: the forge was asked to switch protocols", path)
		}
	}
}

type refusingGate struct {
	got      chan string
	recorded *[]string
}

type testRefusal struct {
	repo     string
	recorded *[]string
}

func (testRefusal) WriteResponse(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-git-receive-pack-result")
	io.WriteString(w, "refused by the gate\n")
}
func (r testRefusal) Record() {
	*r.recorded = append(*r.recorded, r.repo+" refs/heads/main is the default branch")
}

func (g refusingGate) Check(ctx context.Context, forge http.RoundTripper, repo *url.URL, body io.Reader) (io.Reader, Refusal, error) {
	b, _ := io.ReadAll(body)
	g.got <- repo.String() + " " + string(b)
	if strings.Contains(string(b), "main") {
		return nil, testRefusal{repo.String(), g.recorded}, nil
	}
	// A gate forwards the bytes it read: the same length here, in capitals,
	// so that what the forge gets is seen to be the gate's.
	return strings.NewReader(strings.ToUpper(string(b))), nil, nil
}

// TestServerPushGate: a receive-pack request goes through the gate with
// its body decoded; a refusal is answered and recorded and nothing reaches
// the forge; what the gate lets through is what the forge gets.
func TestServerPushGate(t *testing.T) {
	var recorded []string
	gate := refusingGate{got: make(chan string, 4), recorded: &recorded}
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "pushed") }, gate)
	resp, err := f.client.Post("https://forge.example/org/repo.git/git-receive-pack", "application/x-git-receive-pack-request", strings.NewReader("update main"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if g := <-gate.got; !strings.HasSuffix(g, "/org/repo.git update main") || !strings.HasPrefix(g, "https://forge.example:") {
		t.Errorf("the gate got %q", g)
	}
	if string(body) != "refused by the gate\n" || len(recorded) != 1 || !strings.HasSuffix(recorded[0], "/org/repo.git refs/heads/main is the default branch") {
		t.Errorf("answer %q, recorded %q", body, recorded)
	}
	select {
	case r := <-f.got:
		t.Errorf("a refused push reached the forge: %s", r.URL)
	default:
	}
	// A push in another form a forge's router may fold into the gate's
	// (a trailing slash, another case, another method, the push's content
	// type elsewhere) is refused before the forge sees it.
	for _, req := range []struct{ method, path, ctype string }{
		{"POST", "/org/repo.git/git-receive-pack/", "application/x-git-receive-pack-request"},
		{"POST", "/org/repo.git/GIT-RECEIVE-PACK", "application/x-git-receive-pack-request"},
		{"PUT", "/org/repo.git/git-receive-pack", "application/x-git-receive-pack-request"},
		{"POST", "/org/repo.git/git-upload-pack", "application/x-git-receive-pack-request"},
	} {
		rq, _ := http.NewRequest(req.method, "https://forge.example"+req.path, strings.NewReader("update main"))
		rq.Header.Set("Content-Type", req.ctype)
		resp, err := f.client.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s %s: %d, not refused", req.method, req.path, resp.StatusCode)
		}
	}
	select {
	case r := <-f.got:
		t.Errorf("a push in another form reached the forge: %s %s", r.Method, r.URL)
	default:
	}
	adv, err := f.client.Get("https://forge.example/org/repo.git/info/refs?service=git-receive-pack")
	if err != nil {
		t.Fatal(err)
	}
	adv.Body.Close()
	<-f.got
	<-f.bodies
	resp, err = f.client.Post("https://forge.example/org/repo.git/git-receive-pack", "application/x-git-receive-pack-request", strings.NewReader("update work"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	<-gate.got
	<-f.got
	if b := <-f.bodies; b != "UPDATE WORK" {
		t.Errorf("the forge got %q", b)
	}
}

// refusingRequests refuses every PATCH, saying what it was asked.
type refusingRequests struct {
	asked    chan string
	recorded *[]string
}

func (g refusingRequests) Check(api bool, r *http.Request) string {
	g.asked <- fmt.Sprintf("api=%v %s %s", api, r.Method, r.URL.Path)
	if r.Method == http.MethodPatch {
		return r.Method + " " + r.URL.Path + " is not in forge-api"
	}
	return ""
}

func (g refusingRequests) Record(host, request, why string) {
	*g.recorded = append(*g.recorded, host+" "+request+": "+why)
}

// TestServerRequestGate: every request but a push is asked of the request
// gate, with whether its host is an API host; a refused one is answered 403
// with a JSON message, recorded, and never reaches the forge; one let
// through reaches it with its body.
func TestServerRequestGate(t *testing.T) {
	var recorded []string
	gate := refusingRequests{asked: make(chan string, 4), recorded: &recorded}
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "done") }, nil, gate)
	rq, _ := http.NewRequest(http.MethodPatch, "https://forge.example/api/v3/repos/o/r/git/refs/heads/main", strings.NewReader(`{"force":true}`))
	resp, err := f.client.Do(rq)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// The gate answers before the forge's answer is written: what it
	// was asked is there by now.
	if a := asked(gate.asked); a != "api=false PATCH /api/v3/repos/o/r/git/refs/heads/main" {
		t.Errorf("the gate was asked %q", a)
	}
	var answer struct{ Message string }
	if resp.StatusCode != http.StatusForbidden || json.Unmarshal(body, &answer) != nil || !strings.HasSuffix(answer.Message, "PATCH /api/v3/repos/o/r/git/refs/heads/main is not in forge-api") {
		t.Errorf("a refused request got %d %q", resp.StatusCode, body)
	}
	if len(recorded) != 1 || !strings.HasPrefix(recorded[0], "forge.example:") || !strings.HasSuffix(recorded[0], " PATCH /api/v3/repos/o/r/git/refs/heads/main: PATCH /api/v3/repos/o/r/git/refs/heads/main is not in forge-api") {
		t.Errorf("recorded %q", recorded)
	}
	select {
	case r := <-f.got:
		t.Errorf("a refused request reached the forge: %s %s", r.Method, r.URL)
	default:
	}
	resp, err = f.client.Post("https://forge.example/api/graphql", "application/json", strings.NewReader(`{"query":"{ viewer { login } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a := asked(gate.asked); a != "api=false POST /api/graphql" {
		t.Errorf("the gate was asked %q", a)
	}
	<-f.got
	if b := <-f.bodies; b != `{"query":"{ viewer { login } }"}` || resp.StatusCode != http.StatusOK {
		t.Errorf("a request let through: %d, the forge got %q", resp.StatusCode, b)
	}
}

// asked is what the gate was last asked, "" when nothing.
func asked(c chan string) string {
	select {
	case a := <-c:
		return a
	default:
		return ""
	}
}
