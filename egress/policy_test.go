package egress

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
)

func TestClassify(t *testing.T) {
	tests := map[string]string{
		"8.8.8.8":                "",
		"1.1.1.1":                "",
		"172.32.0.1":             "",
		"100.128.0.1":            "",
		"2606:4700::1111":        "",
		"::ffff:8.8.8.8":         "",
		"64:ff9b::808:808":       "",
		"127.0.0.1":              "loopback",
		"127.255.255.254":        "loopback",
		"::1":                    "loopback",
		"::ffff:127.0.0.1":       "loopback",
		"64:ff9b::7f00:1":        "loopback",
		"10.1.2.3":               "private",
		"172.16.0.1":             "private",
		"172.31.255.255":         "private",
		"192.168.1.1":            "private",
		"::ffff:10.1.2.3":        "private",
		"64:ff9b::a01:203":       "private",
		"100.64.0.1":             "shared (CGNAT)",
		"100.100.100.200":        "shared (CGNAT)",
		"169.254.169.254":        "link-local (cloud metadata)",
		"::ffff:169.254.169.254": "link-local (cloud metadata)",
		"64:ff9b::a9fe:a9fe":     "link-local (cloud metadata)",
		"fd00:ec2::254":          "unique-local (cloud metadata)",
		"169.254.1.1":            "link-local",
		"fe80::1":                "link-local",
		"fe80::1%eth0":           "link-local",
		"fd12:3456::1":           "unique-local",
		"fc00::1":                "unique-local",
		"fec0::1":                "site-local",
		"0.0.0.0":                "unspecified",
		"::":                     "unspecified",
		"0.1.2.3":                "reserved",
		"192.0.0.170":            "reserved",
		"198.18.0.1":             "reserved",
		"198.19.255.255":         "reserved",
		"240.0.0.1":              "reserved",
		"::7f00:1":               "reserved",
		"64:ff9b:1::1":           "reserved",
		"224.0.0.1":              "multicast",
		"239.255.255.250":        "multicast",
		"ff02::1":                "multicast",
		"255.255.255.255":        "broadcast",
	}
	for in, want := range tests {
		if got := Classify(netip.MustParseAddr(in)); got != want {
			t.Errorf("Classify(%s) = %q, want %q", in, got, want)
		}
	}
	if got := Classify(netip.Addr{}); got != "invalid" {
		t.Errorf("Classify(zero Addr) = %q, want invalid", got)
	}
}

// fakeDNS answers from a table; names missing from it do not exist.
func fakeDNS(table map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		answers, ok := table[host]
		if !ok {
			return nil, errors.New("no such host")
		}
		var addrs []netip.Addr
		for _, a := range answers {
			addrs = append(addrs, netip.MustParseAddr(a))
		}
		return addrs, nil
	}
}

func TestCheck(t *testing.T) {
	dns := fakeDNS(map[string][]string{
		"public.test":   {"93.184.216.34"},
		"loop.test":     {"127.0.0.1"},
		"private.test":  {"10.1.2.3"},
		"metadata.test": {"169.254.169.254"},
		"ec2v6.test":    {"fd00:ec2::254"},
		"mapped.test":   {"::ffff:127.0.0.1"},
		"mixed.test":    {"10.0.0.5", "93.184.216.34", "127.0.0.1", "2606:4700::1111"},
		"empty.test":    {},
		"inside.test":   {"10.0.0.5", "127.0.0.1"},
	})
	names := []string{"public.test", "loop.test", "private.test", "metadata.test", "ec2v6.test", "mapped.test", "mixed.test", "inside.test", "empty.test", "gone.test"}
	var domains []hostaddr.Domain
	for _, n := range names {
		domains = append(domains, hostaddr.Domain{Host: n})
	}
	strict := &Proxy{Policy: Policy{Domains: domains}, Resolve: dns}
	lenient := &Proxy{Policy: Policy{Domains: domains, IPs: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.1/32"),
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("169.254.169.254/32"),
		netip.MustParsePrefix("fd00:ec2::/32"),
		netip.MustParsePrefix("203.0.113.0/24"),
	}}, Resolve: dns}
	tests := []struct {
		p      *Proxy
		host   string
		port   int
		access hostaddr.Access
		want   []string
		reason string
	}{
		{strict, "public.test", 443, hostaddr.Tunnel, []string{"93.184.216.34"}, ""},
		{strict, "PUBLIC.test.", 80, hostaddr.Request, []string{"93.184.216.34"}, ""},
		{strict, "public.test", 80, hostaddr.Tunnel, nil, "a tunnel to port 80 needs allow-domain = public.test:80; plain http:// requests (GET http://public.test/) go through without it"},
		{strict, "public.test", 8080, hostaddr.Tunnel, nil, "not in the allowlist"},
		{strict, "other.test", 443, hostaddr.Tunnel, nil, "not in the allowlist"},
		{strict, "loop.test", 443, hostaddr.Tunnel, nil, "resolves to loopback address 127.0.0.1"},
		{strict, "private.test", 443, hostaddr.Tunnel, nil, "resolves to private address 10.1.2.3"},
		{strict, "metadata.test", 80, hostaddr.Request, nil, "resolves to link-local (cloud metadata) address 169.254.169.254"},
		{strict, "ec2v6.test", 80, hostaddr.Request, nil, "resolves to unique-local (cloud metadata) address fd00:ec2::254"},
		{strict, "mapped.test", 443, hostaddr.Tunnel, nil, "resolves to loopback address 127.0.0.1"},
		{strict, "mixed.test", 443, hostaddr.Tunnel, []string{"93.184.216.34", "2606:4700::1111"}, ""},
		{strict, "inside.test", 443, hostaddr.Tunnel, nil, "resolves to private address 10.0.0.5"},
		{strict, "empty.test", 443, hostaddr.Tunnel, nil, "resolves to no address"},
		{strict, "gone.test", 443, hostaddr.Tunnel, nil, "cannot resolve: no such host"},
		{strict, "93.184.216.34", 443, hostaddr.Tunnel, nil, "IP address not in allow-ip"},
		{strict, "127.0.0.1", 443, hostaddr.Tunnel, nil, "IP address not in allow-ip"},
		{lenient, "loop.test", 443, hostaddr.Tunnel, []string{"127.0.0.1"}, ""},
		{lenient, "private.test", 443, hostaddr.Tunnel, []string{"10.1.2.3"}, ""},
		{lenient, "metadata.test", 80, hostaddr.Request, []string{"169.254.169.254"}, ""},
		{lenient, "ec2v6.test", 80, hostaddr.Request, []string{"fd00:ec2::254"}, ""},
		{lenient, "mapped.test", 443, hostaddr.Tunnel, []string{"127.0.0.1"}, ""},
		{lenient, "mixed.test", 443, hostaddr.Tunnel, []string{"10.0.0.5", "93.184.216.34", "127.0.0.1", "2606:4700::1111"}, ""},
		{lenient, "loop.test", 8080, hostaddr.Tunnel, nil, "not in the allowlist"}, // allow-ip does not widen a name's ports
		{lenient, "127.0.0.1", 5432, hostaddr.Tunnel, []string{"127.0.0.1"}, ""},   // an allowed IP literal, any port
		{lenient, "::ffff:127.0.0.1", 22, hostaddr.Tunnel, []string{"127.0.0.1"}, ""},
		{lenient, "203.0.113.9", 443, hostaddr.Tunnel, []string{"203.0.113.9"}, ""},
		{lenient, "127.0.0.2", 443, hostaddr.Tunnel, nil, "IP address not in allow-ip"},
		{lenient, "::1", 443, hostaddr.Tunnel, nil, "IP address not in allow-ip"},
	}
	for _, tt := range tests {
		addrs, err := tt.p.Check(context.Background(), tt.host, tt.port, tt.access)
		var got []string
		for _, a := range addrs {
			got = append(got, a.String())
		}
		reason := ""
		if err != nil {
			reason = err.Error()
		}
		if !slices.Equal(got, tt.want) || reason != tt.reason {
			t.Errorf("Check(%q, %d, %d) with IPs %v = %v, %q; want %v, %q", tt.host, tt.port, tt.access, tt.p.Policy.IPs, got, reason, tt.want, tt.reason)
		}
	}
}
