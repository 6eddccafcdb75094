package hostaddr

import (
	"strings"
	"testing"
)

func TestParseDomain(t *testing.T) {
	good := []struct {
		in   string
		want Domain
	}{
		{"example.com", Domain{"example.com", 0}},
		{"Example.COM.", Domain{"example.com", 0}},
		{"api.example.com:8443", Domain{"api.example.com", 8443}},
		{"*.example.com", Domain{"*.example.com", 0}},
		{"*.Example.com:443", Domain{"*.example.com", 443}},
		{"localhost", Domain{"localhost", 0}},
		{"_acme.x-1.example.com:1", Domain{"_acme.x-1.example.com", 1}},
		{"example.com:65535", Domain{"example.com", 65535}},
	}
	for _, tt := range good {
		got, err := ParseDomain(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDomain(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	bad := []struct{ in, why string }{
		{"", "not a DNS name"},
		{"1.2.3.4", "IP address"},
		{"1.2.3.4:443", "IP address"},
		{"::1", "IP address"},
		{"[::1]:443", "IP address"},
		{"127.1", "IP address"},
		{"0x7f000001", "IP address"},
		{"example.com:0", "port"},
		{"example.com:65536", "port"},
		{"example.com:", "port"},
		{"example.com:https", "port"},
		{"example.com:+443", "port"},
		{"*.com", "wildcard"},
		{"*", "wildcard"},
		{"*example.com", "wildcard"},
		{"a.*.example.com", "wildcard"},
		{"**.example.com", "wildcard"},
		{"exa mple.com", "not a DNS name"},
		{"-a.example.com", "not a DNS name"},
		{"a-.example.com", "not a DNS name"},
		{"a..example.com", "not a DNS name"},
		{".example.com", "not a DNS name"},
		{strings.Repeat("a", 64) + ".com", "not a DNS name"},
		{strings.Repeat("a.", 127) + "com", "not a DNS name"},
		{"http://example.com", "port"},
		{"example.com/path", "not a DNS name"},
	}
	for _, tt := range bad {
		_, err := ParseDomain(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("ParseDomain(%q) error = %v, want one mentioning %q", tt.in, err, tt.why)
		}
	}
}

func TestParseIP(t *testing.T) {
	good := map[string]string{
		"10.1.2.3":      "10.1.2.3/32",
		"10.0.0.0/8":    "10.0.0.0/8",
		"0.0.0.0/0":     "0.0.0.0/0",
		"::1":           "::1/128",
		"fd00:ec2::/32": "fd00:ec2::/32",
	}
	for in, want := range good {
		got, err := ParseIP(in)
		if err != nil || got.String() != want {
			t.Errorf("ParseIP(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	bad := []struct{ in, why string }{
		{"10.0.0.1/8", "write 10.0.0.0/8"},
		{"fd00::1/8", "write fd00::/8"},
		{"10.0.0.0/33", "not an IP address"},
		{"example.com", "not an IP address"},
		{"", "not an IP address"},
		{"10.0.0.1:80", "not an IP address"},
		{"fe80::1%eth0", "not an IP address"},
		{"::ffff:10.0.0.1", "write the IPv4 form, 10.0.0.1"},
		{"::ffff:10.0.0.0/104", "IPv4 form"},
	}
	for _, tt := range bad {
		_, err := ParseIP(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("ParseIP(%q) error = %v, want one mentioning %q", tt.in, err, tt.why)
		}
	}
}

// accessName names an Access in test messages.
var accessName = map[Access]string{Request: "Request", Tunnel: "Tunnel"}

func TestAllowsName(t *testing.T) {
	p := Allowlist{Domains: []Domain{
		{"example.com", 0},
		{"*.wild.test", 0},
		{"git.example.org", 22},
		{"*.ports.test", 8443},
		{"plain.test", 80},
		{"*.plain.test", 80},
	}}
	tests := []struct {
		host   string
		port   int
		access Access
		want   bool
	}{
		{"example.com", 443, Tunnel, true},
		{"example.com", 443, Request, true},
		{"example.com", 80, Request, true},
		{"example.com", 80, Tunnel, false}, // plain HTTP in a tunnel names any host inside
		{"example.com", 8080, Request, false},
		{"www.example.com", 443, Tunnel, false}, // an apex does not cover its subdomains
		{"notexample.com", 443, Tunnel, false},
		{"a.wild.test", 443, Tunnel, true},
		{"a.b.wild.test", 80, Request, true},
		{"a.b.wild.test", 80, Tunnel, false},
		{"wild.test", 443, Tunnel, false}, // a wildcard does not cover its apex
		{"xwild.test", 443, Tunnel, false},
		{".wild.test", 443, Tunnel, false},
		{"a.wild.test", 22, Tunnel, false},
		{"git.example.org", 22, Tunnel, true},
		{"git.example.org", 443, Tunnel, false}, // an explicit port replaces 80 and 443
		{"a.ports.test", 8443, Tunnel, true},
		{"a.ports.test", 8443, Request, true},
		{"a.ports.test", 443, Tunnel, false},
		{"plain.test", 80, Tunnel, true}, // a line that names port 80 opens it to tunnels
		{"plain.test", 80, Request, true},
		{"plain.test", 443, Tunnel, false},
		{"a.plain.test", 80, Tunnel, true},
	}
	for _, tt := range tests {
		if got := p.AllowsName(tt.host, tt.port, tt.access); got != tt.want {
			t.Errorf("AllowsName(%q, %d, %s) = %v, want %v", tt.host, tt.port, accessName[tt.access], got, tt.want)
		}
	}
}

// A tunnel to port 80 of a name open to plain requests only is refused
// with the line that would open it; a preset's host is named only where
// the preset would let the access through.
func TestAllowsReasons(t *testing.T) {
	p := Allowlist{Domains: []Domain{{"example.com", 0}, {"*.wild.test", 0}}}
	tests := []struct {
		host   string
		port   int
		access Access
		reason string
	}{
		{"example.com", 80, Request, ""},
		{"Example.COM.", 80, Tunnel, "a tunnel to port 80 needs allow-domain = example.com:80; plain http:// requests (GET http://example.com/) go through without it"},
		{"a.wild.test", 80, Tunnel, "a tunnel to port 80 needs allow-domain = a.wild.test:80; plain http:// requests (GET http://a.wild.test/) go through without it"},
		{"deb.debian.org", 80, Request, "not in the allowlist; allow-preset = debian would let it through"},
		{"deb.debian.org", 443, Tunnel, "not in the allowlist; allow-preset = debian would let it through"},
		{"deb.debian.org", 80, Tunnel, "not in the allowlist"},
		{"other.test", 443, Tunnel, "not in the allowlist"},
	}
	for _, tt := range tests {
		reason := ""
		if err := p.Allows(tt.host, tt.port, tt.access); err != nil {
			reason = err.Error()
		}
		if reason != tt.reason {
			t.Errorf("Allows(%q, %d, %s) = %q, want %q", tt.host, tt.port, accessName[tt.access], reason, tt.reason)
		}
	}
}
