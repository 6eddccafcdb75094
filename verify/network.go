package verify

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/claude-sandbox/claude-sandbox/egress"
	"github.com/claude-sandbox/claude-sandbox/internal/envlist"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// What the network checks report in open mode, where the sandbox has the
// container's network and no proxy.
const (
	openDetail    = "network = open: the container's network"
	notApplicable = "not applicable: " + openDetail
)

// publicAddrs are what direct-egress-refused tries to reach around the
// proxy: a public resolver, by IPv4 and IPv6.
var publicAddrs = []string{"1.1.1.1:443", "[2606:4700:4700::1111]:443"}

// publicResolver is asked besides /etc/resolv.conf's servers, so that a
// sandbox whose resolver is on loopback still shows a public one unreachable.
const publicResolver = "1.1.1.1:53"

// metadataAddr is the cloud metadata service, which hands out the host's
// cloud credentials to whoever reaches it.
const metadataAddr = "169.254.169.254:80"

// probeName is what dns-refused asks for: a name under .invalid (RFC 6761),
// which no resolver answers with data even if the query got out.
const probeName = "claude-sandbox-verify.invalid"

// network reports the conf's network and credential modes; the checks
// after it probe what each mode promises.
func network(f *facts) (string, error) {
	if f.confErr != nil {
		return "", f.confErr
	}
	c := f.conf
	return fmt.Sprintf("network = %s%s, credentials = %s%s, in %s; allowlist: %s; the checks that follow probe them",
		c.NetworkMode(), byDefault(c.Network), c.CredentialMode(), byDefault(c.Credentials), c.Source, c.AllowlistSummary()), nil
}

func byDefault(line string) string {
	if line == "" {
		return " (the default)"
	}
	return ""
}

// allowlist reports whether the conf asks for the allowlist network, the
// one the network checks probe.
func allowlist(f *facts) (bool, error) {
	if f.confErr != nil {
		return false, f.confErr
	}
	return f.conf.NetworkMode() == sandbox.NetworkAllowlist, nil
}

// networkNamespace: the sandbox has a network namespace of its own whose
// only interface is loopback, so no packet leaves but through the
// launcher's proxy, and the container's loopback services are not this
// loopback.
func networkNamespace(f *facts) (string, error) {
	if ok, err := allowlist(f); !ok {
		return openDetail, err
	}
	if f.interfacesErr != nil {
		return "", f.interfacesErr
	}
	if len(f.interfaces) != 1 || f.interfaces[0] != "lo" {
		return "", fmt.Errorf("the interfaces are %s, not lo alone: the sandbox is in a network namespace that leads out", strings.Join(f.interfaces, ", "))
	}
	return "lo is the only interface in /proc/net/dev: the sandbox's own network namespace", nil
}

func readInterfaces() ([]string, error) {
	f, err := os.Open("/proc/net/dev")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseNetDev(f)
}

// parseNetDev returns the interface names of /proc/net/dev, whose two
// header lines hold no colon.
func parseNetDev(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if name, _, ok := strings.Cut(sc.Text(), ":"); ok {
			out = append(out, strings.TrimSpace(name))
		}
	}
	return out, sc.Err()
}

// directEgressRefused: a connection around the proxy finds no route, by
// IPv4 or IPv6. A timeout or a refusal would mean packets left.
func directEgressRefused(f *facts) (string, error) {
	if ok, err := allowlist(f); !ok {
		return openDetail, err
	}
	var shown []string
	for _, addr := range publicAddrs {
		conn, err := f.dial("tcp", addr, 2*time.Second)
		if err == nil {
			conn.Close()
			return "", fmt.Errorf("connected to %s around the proxy", addr)
		}
		if !noRoute(err) {
			return "", fmt.Errorf("connecting to %s: %s, not \"network is unreachable\": a route leads out of the sandbox", addr, shortErr(err))
		}
		shown = append(shown, addr+": "+shortErr(err))
	}
	return "no route: " + strings.Join(shown, "; "), nil
}

// noRoute reports whether a connect failed for want of a route out
// (EAFNOSUPPORT: a kernel without IPv6).
func noRoute(err error) bool {
	return errors.Is(err, unix.ENETUNREACH) || errors.Is(err, unix.EHOSTUNREACH) || errors.Is(err, unix.EAFNOSUPPORT)
}

// shortErr drops net's "dial tcp ADDR:" prefix, which the detail names
// already.
func shortErr(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		err = op.Err
	}
	return err.Error()
}

// dnsRefused: no DNS server answers, neither the configured ones nor a
// public one, so no name can carry data out through a resolver.
func dnsRefused(f *facts) (string, error) {
	if ok, err := allowlist(f); !ok {
		return notApplicable, err
	}
	if f.nameserversErr != nil {
		return "", f.nameserversErr
	}
	servers := slices.Clone(f.nameservers)
	if !slices.Contains(servers, publicResolver) {
		servers = append(servers, publicResolver)
	}
	var shown []string
	for _, s := range servers {
		answered, why := askDNS(f.dial, s)
		if answered {
			return "", fmt.Errorf("%s answered a query for %s (%s): DNS leads out of the sandbox", s, probeName, why)
		}
		shown = append(shown, s+": "+why)
	}
	return "no answer: " + strings.Join(shown, "; "), nil
}

// askDNS sends a query for probeName to server and waits a second for a
// reply. Any reply counts: a server that says NXDOMAIN still read the name.
func askDNS(dial dialFunc, server string) (answered bool, why string) {
	conn, err := dial("udp", server, time.Second)
	if err != nil {
		return false, shortErr(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write(dnsQuery(0x5eed, probeName)); err != nil {
		return false, shortErr(err)
	}
	n, err := conn.Read(make([]byte, 512))
	if err != nil {
		return false, shortErr(err)
	}
	return true, fmt.Sprintf("%d bytes", n)
}

// dnsQuery is a DNS query (RFC 1035) for name's A record, recursion desired.
func dnsQuery(id uint16, name string) []byte {
	q := []byte{byte(id >> 8), byte(id), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, label := range strings.Split(name, ".") {
		q = append(q, byte(len(label)))
		q = append(q, label...)
	}
	return append(q, 0, 0, 1, 0, 1)
}

func readNameservers() ([]string, error) {
	f, err := os.Open("/etc/resolv.conf")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // no resolver configured: only the public one is asked
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseResolvConf(f)
}

// parseResolvConf returns the nameserver lines of resolv.conf(5) as
// host:53.
func parseResolvConf(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "nameserver" {
			out = append(out, net.JoinHostPort(f[1], "53"))
		}
	}
	return out, sc.Err()
}

// proxyVars must all name the egress proxy, so every tool that honours
// them goes out through it.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}

// proxyEnvironment: the sandbox started with the proxy variables naming the
// egress proxy, no SOCKS ALL_PROXY (the proxy speaks HTTP), and only
// loopback exempt, where the credential proxy listens.
func proxyEnvironment(f *facts) (string, error) {
	if ok, err := allowlist(f); !ok {
		return notApplicable, err
	}
	if f.startEnvErr != nil {
		return "", f.startEnvErr
	}
	env := envlist.Map(f.startEnv)
	proxy := "http://" + sandbox.EgressProxyAddr
	var wrong, set, wide []string
	for _, n := range proxyVars {
		if env[n] != proxy {
			wrong = append(wrong, n)
		}
	}
	for _, n := range []string{"ALL_PROXY", "all_proxy"} {
		if env[n] != "" {
			set = append(set, n)
		}
	}
	for _, n := range []string{"NO_PROXY", "no_proxy"} {
		if !loopbackOnly(env[n]) {
			wide = append(wide, n)
		}
	}
	var problems []string
	if len(wrong) > 0 {
		problems = append(problems, fmt.Sprintf("%s not %s", strings.Join(wrong, ", "), proxy))
	}
	if len(set) > 0 {
		problems = append(problems, strings.Join(set, ", ")+" set")
	}
	if len(wide) > 0 {
		problems = append(problems, strings.Join(wide, ", ")+" not loopback alone")
	}
	if len(problems) > 0 {
		return "", fmt.Errorf("pid %d started with %s", f.firstPID, strings.Join(problems, "; "))
	}
	return fmt.Sprintf("pid %d started with %s = %s, NO_PROXY and no_proxy loopback alone, no ALL_PROXY", f.firstPID, strings.Join(proxyVars, ", "), proxy), nil
}

// loopbackOnly reports whether a NO_PROXY list is set and exempts nothing
// but loopback.
func loopbackOnly(list string) bool {
	if list == "" {
		return false
	}
	for _, h := range strings.Split(list, ",") {
		if h != "127.0.0.1" && h != "localhost" && h != "::1" {
			return false
		}
	}
	return true
}

// proxyRefusesMetadata: the egress proxy runs, and refuses a tunnel to the
// cloud metadata service with its own 403. The refusal is logged, so
// `claude-sandbox denials` shows one line per run.
func proxyRefusesMetadata(f *facts) (string, error) {
	if ok, err := allowlist(f); !ok {
		return notApplicable, err
	}
	conn, err := f.dial("tcp", sandbox.EgressProxyAddr, 2*time.Second)
	if err != nil {
		return "", fmt.Errorf("the egress proxy at %s does not answer (%s): nothing in the sandbox can reach the network", sandbox.EgressProxyAddr, shortErr(err))
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", metadataAddr, metadataAddr); err != nil {
		return "", fmt.Errorf("the egress proxy at %s: %s", sandbox.EgressProxyAddr, shortErr(err))
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return "", fmt.Errorf("the egress proxy at %s gave no answer to CONNECT %s: %s", sandbox.EgressProxyAddr, metadataAddr, shortErr(err))
	}
	resp.Body.Close()
	reason := resp.Header.Get(egress.DeniedHeader)
	switch {
	case resp.StatusCode/100 == 2:
		return "", fmt.Errorf("the egress proxy opened a tunnel to the metadata service %s (%s; does allow-ip cover it?)", metadataAddr, resp.Status)
	case resp.StatusCode != http.StatusForbidden:
		return "", fmt.Errorf("the egress proxy answered CONNECT %s with %s, not 403", metadataAddr, resp.Status)
	case reason == "":
		return "", fmt.Errorf("403 to CONNECT %s without %s: %s is not the launcher's proxy", metadataAddr, egress.DeniedHeader, sandbox.EgressProxyAddr)
	}
	return fmt.Sprintf("CONNECT %s through %s: 403, %s: %s", metadataAddr, sandbox.EgressProxyAddr, egress.DeniedHeader, reason), nil
}
