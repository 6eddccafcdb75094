package verify

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// netFacts are the facts the network and credential checks read: a conf,
// and the environment the sandbox started with.
func netFacts(t *testing.T, conf string, env ...string) *facts {
	t.Helper()
	c, err := sandbox.ParseConf("test.conf", strings.NewReader(conf))
	if err != nil {
		t.Fatal(err)
	}
	return &facts{conf: c, startEnv: env, firstPID: 2}
}

// answer is how the fake network answers a dial: an error, or a
// connection whose far end serve runs.
type answer struct {
	err   error
	serve func(net.Conn)
}

// fakeDial answers the addresses it is given and fails the test on any other.
func fakeDial(t *testing.T, answers map[string]answer) dialFunc {
	return func(network, addr string, _ time.Duration) (net.Conn, error) {
		a, ok := answers[addr]
		if !ok {
			t.Errorf("unexpected dial %s %s", network, addr)
			return nil, errors.New("unexpected dial")
		}
		if a.err != nil {
			return nil, a.err
		}
		near, far := net.Pipe()
		go func() {
			defer far.Close()
			a.serve(far)
		}()
		return near, nil
	}
}

// connectErr is what net.DialTimeout returns when connect(2) fails.
func connectErr(errno error) error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errno)}
}

// silent reads what it is sent and closes without a word.
func silent(c net.Conn) { c.Read(make([]byte, 512)) }

func wantCheck(t *testing.T, name string, detail string, err error, want string) {
	t.Helper()
	got := detail
	if err != nil {
		got = "FAIL " + err.Error()
	}
	if !strings.Contains(got, want) {
		t.Errorf("%s = %q, want it to contain %q", name, got, want)
	}
}

func TestParseNetDev(t *testing.T) {
	in := `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1234      12    0    0    0     0          0         0     1234      12    0    0    0     0       0          0
  eth0: 99 1 0 0 0 0 0 0 99 1 0 0 0 0 0 0
`
	got, err := parseNetDev(strings.NewReader(in))
	if err != nil || !cmp.Equal(got, []string{"lo", "eth0"}) {
		t.Errorf("parseNetDev = %q, %v", got, err)
	}
}

func TestParseResolvConf(t *testing.T) {
	in := "# generated\nsearch example.com\nnameserver 127.0.0.53\nnameserver fe80::1%eth0\n;nameserver 9.9.9.9\noptions edns0\n"
	got, err := parseResolvConf(strings.NewReader(in))
	if err != nil || !cmp.Equal(got, []string{"127.0.0.53:53", "[fe80::1%eth0]:53"}) {
		t.Errorf("parseResolvConf = %q, %v", got, err)
	}
}

func TestDNSQuery(t *testing.T) {
	want := []byte{0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'a', 2, 'b', 'c', 0, 0, 1, 0, 1}
	if got := dnsQuery(0x1234, "a.bc"); !bytes.Equal(got, want) {
		t.Errorf("dnsQuery = % x, want % x", got, want)
	}
}

func TestNetworkReportsTheModes(t *testing.T) {
	d, err := network(netFacts(t, ""))
	wantCheck(t, "network", d, err, "network = allowlist (the default), credentials = proxy (the default), in test.conf")
	d, err = network(netFacts(t, "network = open\ncredentials = inside\n"))
	wantCheck(t, "network", d, err, "network = open, credentials = inside, in test.conf; allowlist: none: network = open;")
	d, err = network(netFacts(t, "allow-preset = npm, pypi\nallow-preset = npm\nallow-domain = example.com\n"))
	wantCheck(t, "network", d, err, "in test.conf; allowlist: allow-preset npm, pypi (3 hosts), 1 allow-domain, 0 allow-ip, besides Claude Code's own connection; the checks")
	d, err = network(&facts{confErr: errors.New("no conf")})
	wantCheck(t, "network", d, err, "FAIL no conf")
}

func TestNetworkNamespace(t *testing.T) {
	f := netFacts(t, "")
	f.interfaces = []string{"lo"}
	d, err := networkNamespace(f)
	wantCheck(t, "only lo", d, err, "lo is the only interface")
	f.interfaces = []string{"lo", "eth0"}
	d, err = networkNamespace(f)
	wantCheck(t, "lo and eth0", d, err, "FAIL the interfaces are lo, eth0, not lo alone")
	f.interfaces, f.interfacesErr = nil, errors.New("no /proc/net/dev")
	d, err = networkNamespace(f)
	wantCheck(t, "unreadable", d, err, "FAIL no /proc/net/dev")

	open := netFacts(t, "network = open\n")
	open.interfaces = []string{"lo", "eth0"}
	d, err = networkNamespace(open)
	wantCheck(t, "open", d, err, openDetail)
	d, err = networkNamespace(&facts{confErr: errors.New("no conf")})
	wantCheck(t, "no conf", d, err, "FAIL no conf")
}

func TestDirectEgressRefused(t *testing.T) {
	unreachable := answer{err: connectErr(unix.ENETUNREACH)}
	for _, tt := range []struct {
		name string
		v6   answer
		want string
	}{
		{"no route", unreachable, "no route: 1.1.1.1:443: connect: network is unreachable; [2606:4700:4700::1111]:443: connect: network is unreachable"},
		{"no IPv6", answer{err: os.NewSyscallError("socket", unix.EAFNOSUPPORT)}, "[2606:4700:4700::1111]:443: socket: address family not supported"},
		{"connected", answer{serve: silent}, "FAIL connected to [2606:4700:4700::1111]:443 around the proxy"},
		{"timed out", answer{err: &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}}, `FAIL connecting to [2606:4700:4700::1111]:443: i/o timeout, not "network is unreachable"`},
		{"refused", answer{err: connectErr(unix.ECONNREFUSED)}, "FAIL connecting to [2606:4700:4700::1111]:443: connect: connection refused"},
	} {
		f := netFacts(t, "")
		f.dial = fakeDial(t, map[string]answer{"1.1.1.1:443": unreachable, "[2606:4700:4700::1111]:443": tt.v6})
		d, err := directEgressRefused(f)
		wantCheck(t, tt.name, d, err, tt.want)
	}
	d, err := directEgressRefused(netFacts(t, "network = open\n"))
	wantCheck(t, "open", d, err, openDetail)
}

// resolver answers a DNS query by sending it back as a response.
func resolver(t *testing.T) func(net.Conn) {
	return func(c net.Conn) {
		b := make([]byte, 512)
		n, _ := c.Read(b)
		if !bytes.Equal(b[:n], dnsQuery(0x5eed, probeName)) {
			t.Errorf("the query is % x", b[:n])
		}
		b[2] |= 0x80
		c.Write(b[:n])
	}
}

func TestDNSRefused(t *testing.T) {
	unreachable := answer{err: connectErr(unix.ENETUNREACH)}
	f := netFacts(t, "")
	f.nameservers = []string{"127.0.0.11:53"}
	f.dial = fakeDial(t, map[string]answer{"127.0.0.11:53": {serve: silent}, "1.1.1.1:53": unreachable})
	d, err := dnsRefused(f)
	wantCheck(t, "no answer", d, err, "no answer: 127.0.0.11:53: EOF; 1.1.1.1:53: connect: network is unreachable")

	f.dial = fakeDial(t, map[string]answer{"127.0.0.11:53": unreachable, "1.1.1.1:53": {serve: resolver(t)}})
	d, err = dnsRefused(f)
	wantCheck(t, "public answers", d, err, "FAIL 1.1.1.1:53 answered a query for claude-sandbox-verify.invalid (47 bytes)")

	// The public resolver, configured, is asked once.
	f.nameservers = []string{"1.1.1.1:53"}
	f.dial = fakeDial(t, map[string]answer{"1.1.1.1:53": unreachable})
	d, err = dnsRefused(f)
	wantCheck(t, "asked once", d, err, "no answer: 1.1.1.1:53: connect: network is unreachable")
	if strings.Count(d, "1.1.1.1") != 1 {
		t.Errorf("1.1.1.1 asked twice: %s", d)
	}

	f.nameserversErr = errors.New("resolv.conf unreadable")
	d, err = dnsRefused(f)
	wantCheck(t, "unreadable", d, err, "FAIL resolv.conf unreadable")
	d, err = dnsRefused(netFacts(t, "network = open\n"))
	wantCheck(t, "open", d, err, notApplicable)
}

var proxyEnv = []string{
	"HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128",
	"http_proxy=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
	"NO_PROXY=127.0.0.1,localhost,::1", "no_proxy=127.0.0.1,localhost,::1",
}

func TestProxyEnvironment(t *testing.T) {
	d, err := proxyEnvironment(netFacts(t, "", proxyEnv...))
	wantCheck(t, "the launcher's", d, err, "pid 2 started with HTTP_PROXY, HTTPS_PROXY, http_proxy, https_proxy = http://127.0.0.1:3128, NO_PROXY and no_proxy loopback alone, no ALL_PROXY")
	d, err = proxyEnvironment(netFacts(t, "", append(proxyEnv, "ALL_PROXY=")...))
	wantCheck(t, "an empty ALL_PROXY", d, err, "no ALL_PROXY")

	bad := append([]string{"https_proxy=http://user:pw@corp:8080", "all_proxy=socks5://corp:1080", "NO_PROXY=*"}, proxyEnv[:3]...)
	bad = append(bad, proxyEnv[5])
	d, err = proxyEnvironment(netFacts(t, "", bad...))
	wantCheck(t, "the caller's", d, err, "FAIL pid 2 started with https_proxy not http://127.0.0.1:3128; all_proxy set; NO_PROXY not loopback alone")
	if err != nil && strings.Contains(err.Error(), "pw@corp") {
		t.Errorf("a value is shown: %v", err)
	}
	d, err = proxyEnvironment(netFacts(t, "", proxyEnv[:5]...))
	wantCheck(t, "no no_proxy", d, err, "FAIL pid 2 started with no_proxy not loopback alone")

	d, err = proxyEnvironment(&facts{conf: netFacts(t, "").conf, startEnvErr: errors.New("no pid 2")})
	wantCheck(t, "no environment", d, err, "FAIL no pid 2")
	d, err = proxyEnvironment(netFacts(t, "network = open\n"))
	wantCheck(t, "open", d, err, notApplicable)
}

// proxy answers a CONNECT to the metadata service with response.
func proxy(t *testing.T, response string) answer {
	return answer{serve: func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil || req.Method != http.MethodConnect || req.Host != metadataAddr {
			t.Errorf("the proxy got %+v, %v; want CONNECT %s", req, err, metadataAddr)
			return
		}
		fmt.Fprint(c, response)
	}}
}

func TestProxyRefusesMetadata(t *testing.T) {
	for _, tt := range []struct {
		name string
		a    answer
		want string
	}{
		{"refused", proxy(t, "HTTP/1.1 403 Forbidden\r\nX-Claude-Sandbox-Denied: IP address not in allow-ip\r\nContent-Length: 3\r\n\r\nno\n"),
			"CONNECT 169.254.169.254:80 through 127.0.0.1:3128: 403, X-Claude-Sandbox-Denied: IP address not in allow-ip"},
		{"tunnel", proxy(t, "HTTP/1.1 200 Connection established\r\n\r\n"),
			"FAIL the egress proxy opened a tunnel to the metadata service 169.254.169.254:80 (200 Connection established; does allow-ip cover it?)"},
		{"bad gateway", proxy(t, "HTTP/1.1 502 Bad Gateway\r\nX-Claude-Sandbox-Denied: dial: no route\r\nContent-Length: 0\r\n\r\n"),
			"FAIL the egress proxy answered CONNECT 169.254.169.254:80 with 502 Bad Gateway, not 403"},
		{"another proxy", proxy(t, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"),
			"FAIL 403 to CONNECT 169.254.169.254:80 without X-Claude-Sandbox-Denied: 127.0.0.1:3128 is not the launcher's proxy"},
		{"no answer", answer{serve: silent},
			"FAIL the egress proxy at 127.0.0.1:3128 gave no answer to CONNECT 169.254.169.254:80: unexpected EOF"},
		{"down", answer{err: connectErr(unix.ECONNREFUSED)},
			"FAIL the egress proxy at 127.0.0.1:3128 does not answer (connect: connection refused): nothing in the sandbox can reach the network"},
	} {
		f := netFacts(t, "")
		f.dial = fakeDial(t, map[string]answer{"127.0.0.1:3128": tt.a})
		d, err := proxyRefusesMetadata(f)
		wantCheck(t, tt.name, d, err, tt.want)
	}
	d, err := proxyRefusesMetadata(netFacts(t, "network = open\n"))
	wantCheck(t, "open", d, err, notApplicable)
}

const token = "claude-sandbox-session-0123456789abcdef0123456789abcdef"

func TestCredentialPlaceholder(t *testing.T) {
	allowlistBase := "ANTHROPIC_BASE_URL=http://127.0.0.1:3129"
	for _, tt := range []struct {
		name, conf string
		env        []string
		want       string
	}{
		{"proxied", "", []string{"ANTHROPIC_AUTH_TOKEN=" + token, allowlistBase},
			"ANTHROPIC_AUTH_TOKEN is a session token, ANTHROPIC_BASE_URL the credential proxy at http://127.0.0.1:3129; no ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN"},
		{"proxied, open", "network = open\n", []string{"ANTHROPIC_AUTH_TOKEN=" + token, "ANTHROPIC_BASE_URL=http://127.0.0.1:40123"},
			"the credential proxy at http://127.0.0.1:40123"},
		{"no login", "", []string{"ANTHROPIC_API_KEY=", "ANTHROPIC_BASE_URL=https://gateway.example"}, noLoginDetail},
		{"inside", "credentials = inside\n", []string{"ANTHROPIC_API_KEY=sk-real"}, insideDetail},
		{"API key", "", []string{"ANTHROPIC_AUTH_TOKEN=" + token, allowlistBase, "ANTHROPIC_API_KEY=sk-real"},
			"FAIL credentials = proxy, yet pid 2 started with a login: ANTHROPIC_API_KEY"},
		{"OAuth token", "", []string{"CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat-real"},
			"FAIL credentials = proxy, yet pid 2 started with a login: CLAUDE_CODE_OAUTH_TOKEN"},
		{"real auth token", "", []string{"ANTHROPIC_AUTH_TOKEN=sk-real", allowlistBase},
			"FAIL credentials = proxy, yet pid 2 started with a login: ANTHROPIC_AUTH_TOKEN (not a session token)"},
		{"upstream base", "", []string{"ANTHROPIC_AUTH_TOKEN=" + token, "ANTHROPIC_BASE_URL=https://api.anthropic.com"},
			"FAIL ANTHROPIC_AUTH_TOKEN is a session token, but ANTHROPIC_BASE_URL is not the credential proxy (http://127.0.0.1:3129)"},
		{"open's base in allowlist", "", []string{"ANTHROPIC_AUTH_TOKEN=" + token, "ANTHROPIC_BASE_URL=http://127.0.0.1:40123"},
			"FAIL ANTHROPIC_AUTH_TOKEN is a session token, but ANTHROPIC_BASE_URL is not the credential proxy (http://127.0.0.1:3129)"},
		{"another host, open", "network = open\n", []string{"ANTHROPIC_AUTH_TOKEN=" + token, "ANTHROPIC_BASE_URL=http://10.0.0.1:40123"},
			"FAIL ANTHROPIC_AUTH_TOKEN is a session token, but ANTHROPIC_BASE_URL is not the credential proxy (http://127.0.0.1:PORT)"},
	} {
		d, err := credentialPlaceholder(netFacts(t, tt.conf, tt.env...))
		wantCheck(t, tt.name, d, err, tt.want)
		if err != nil && strings.Contains(err.Error(), "sk-") {
			t.Errorf("%s: a value is shown: %v", tt.name, err)
		}
	}
	d, err := credentialPlaceholder(&facts{conf: netFacts(t, "").conf, startEnvErr: errors.New("no pid 2")})
	wantCheck(t, "no environment", d, err, "FAIL no pid 2")
}

func TestCredentialFileHidden(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, layout.CredentialsFile)
	proxied := func(conf string) *facts {
		f := netFacts(t, conf, "ANTHROPIC_AUTH_TOKEN="+token)
		f.launch = &launchView{launch: sandbox.Launch{Home: home}}
		return f
	}
	d, err := credentialFileHidden(proxied(""))
	wantCheck(t, "absent", d, err, file+" is absent")

	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err = credentialFileHidden(proxied(""))
	wantCheck(t, "empty", d, err, file+" reads empty")

	if err := os.WriteFile(file, []byte(`{"claudeAiOauth":{"accessToken":"SECRET"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err = credentialFileHidden(proxied(""))
	wantCheck(t, "readable", d, err, "FAIL "+file+" is not empty: the login the credential proxy keeps outside is readable inside")
	if err != nil && strings.Contains(err.Error(), "SECRET") {
		t.Errorf("the content is shown: %v", err)
	}
	// Only a session token says the launcher kept a login outside.
	d, err = credentialFileHidden(proxied("credentials = inside\n"))
	wantCheck(t, "inside", d, err, insideDetail)
	noToken := netFacts(t, "")
	noToken.launch = &launchView{launch: sandbox.Launch{Home: home}}
	d, err = credentialFileHidden(noToken)
	wantCheck(t, "no login", d, err, noLoginDetail)

	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(file, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err = credentialFileHidden(proxied(""))
	wantCheck(t, "a directory", d, err, "FAIL "+file+" cannot be read (is a directory), and it is not the null device the launcher binds there")

	// The launcher's bind: bwrap makes it nodev, so it is known by its device number.
	d, err = hiddenFile("/dev/null")
	wantCheck(t, "/dev/null", d, err, "/dev/null is the null device")

	f := proxied("")
	f.launch, f.launchErr = nil, errors.New("no plan")
	d, err = credentialFileHidden(f)
	wantCheck(t, "no plan", d, err, "FAIL no plan")
}

func TestSecretVariablesNamesTheSessionToken(t *testing.T) {
	f := netFacts(t, "", "ANTHROPIC_AUTH_TOKEN="+token)
	d, err := secretVariables(f)
	wantCheck(t, "session token", d, err, "only these, allowed: ANTHROPIC_AUTH_TOKEN (the launcher's session token)")
	f = netFacts(t, "credentials = inside\n", "ANTHROPIC_AUTH_TOKEN="+token)
	d, err = secretVariables(f)
	wantCheck(t, "inside", d, err, "only these, allowed: ANTHROPIC_AUTH_TOKEN (passed by design)")
}

// Recomputed from the environment it made, with the session token it
// shows, the plan sets that environment again: launch-environment holds.
func TestRecomputedEnvironmentIsTheLaunchers(t *testing.T) {
	caller := []string{"TERM=xterm", "NO_PROXY=corp.example", "ALL_PROXY=socks5://corp:1080", "ANTHROPIC_API_KEY=sk-real"}
	for _, tt := range []struct {
		name, conf, addr, token string
	}{
		{"allowlist, proxied", "", "127.0.0.1:0", token},
		{"allowlist, no login", "", "", ""},
		{"open, proxied", "network = open\n", "127.0.0.1:40123", token},
		{"open, inside", "network = open\ncredentials = inside\n", "", ""},
	} {
		c, err := sandbox.ParseConf("test.conf", strings.NewReader(tt.conf))
		if err != nil {
			t.Fatal(err)
		}
		l := sandbox.Launch{User: "u", Home: t.TempDir(), Shell: "/bin/sh", Cwd: t.TempDir(), Env: launchenv.Read(caller),
			RealBinary: "/usr/libexec/claude-sandbox/claude", Launcher: "/usr/libexec/claude-sandbox/claude-sandbox", AuthToken: tt.token, AuthAddr: tt.addr}
		first := policyEnv(t, c, l)
		var started []string
		for name, value := range first {
			started = append(started, name+"="+value)
		}
		f := &facts{conf: c, startEnv: started}
		l.Env, l.AuthToken, l.AuthAddr = launchenv.Read(started), "", ""
		f.sessionAuth(&l)
		if diff := cmp.Diff(first, policyEnv(t, c, l)); diff != "" {
			t.Errorf("%s: the recomputed environment differs (-launched +recomputed):\n%s", tt.name, diff)
		}
	}
}

func policyEnv(t *testing.T, c *sandbox.Conf, l sandbox.Launch) map[string]string {
	t.Helper()
	plan, err := sandbox.Build(c, sandbox.SessionEnv{}, l)
	if err != nil {
		t.Fatal(err)
	}
	return planEnv(plan)
}
