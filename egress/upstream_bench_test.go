package egress

import (
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/upstreamproxy"
	"github.com/claude-sandbox/claude-sandbox/upstreamproxy/proxytest"
)

// BenchmarkUpstreamTunnel opens CONNECT tunnels through the allowlist proxy
// to an echo server on loopback, directly and through an upstream proxy
// that requires credentials, alternating in one run so both meet the same
// load, and reports the ratio of the medians of opening a tunnel and
// echoing one byte through it (upstream/direct).
func BenchmarkUpstreamTunnel(b *testing.B) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	port := echo.Addr().(*net.TCPAddr).Port
	corp := &proxytest.Server{User: "alice", Password: "s3cret", Origin: echo.Addr().String()}
	cl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	go corp.Serve(cl)
	settings, err := upstreamproxy.FromEnviron(launchenv.Read([]string{"HTTPS_PROXY=http://alice:s3cret@" + cl.Addr().String()}))
	if err != nil {
		b.Fatal(err)
	}
	serve := func(up *upstreamproxy.Settings) string {
		p := &Proxy{
			Policy:   Policy{Domains: []hostaddr.Domain{{Host: "echo.test", Port: port}}, IPs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
			Resolve:  fakeDNS(map[string][]string{"echo.test": {"127.0.0.1"}}),
			Log:      &Log{Path: filepath.Join(b.TempDir(), "denials.log")},
			Upstream: up,
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.Close() })
		go p.Serve(l)
		return l.Addr().String()
	}
	direct, upstream := serve(nil), serve(settings)
	target := "echo.test:" + strconv.Itoa(port)
	once := func(proxy string) time.Duration {
		start := time.Now()
		c, err := net.Dial("tcp", proxy)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
		buf := make([]byte, len("HTTP/1.1 200 Connection established\r\n\r\n"))
		if _, err := io.ReadFull(c, buf); err != nil || string(buf[9:12]) != "200" {
			b.Fatalf("CONNECT through %s: %q %v", proxy, buf, err)
		}
		c.Write([]byte{'x'})
		if _, err := io.ReadFull(c, buf[:1]); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var d, u []time.Duration
	for b.Loop() {
		d = append(d, once(direct))
		u = append(u, once(upstream))
	}
	med := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	b.ReportMetric(float64(med(u))/float64(med(d)), "upstream/direct")
	b.ReportMetric(float64(med(d).Microseconds()), "direct-µs")
}
