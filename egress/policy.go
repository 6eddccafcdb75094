// Package egress is the allowlist proxy: the sandbox's only way out in
// allowlist mode. The launcher serves it, outside the sandbox, on a socket
// net-init opened inside. It lets through HTTP CONNECT and plain HTTP to the
// names and addresses the admin allowed, resolves names itself, refuses
// addresses that are not public unless allow-ip names them, and dials the
// address it checked. Read policy.go for the decision, proxy.go for the
// serving, log.go for the record of refusals.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Policy is what the proxy lets through.
type Policy struct {
	Domains []Domain       // allowed names
	IPs     []netip.Prefix // allow-ip: addresses allowed although not public, and IP-literal destinations
}

// Domain is one allow-domain line.
type Domain struct {
	Host string // lower-case DNS name, or "*.example.com" for any subdomain of example.com (not example.com itself)
	Port int    // 0 means ports 80 and 443
}

// ParseDomain parses HOST[:PORT]. The host is a DNS name, or a name under a
// leading "*."; IP addresses belong in allow-ip.
func ParseDomain(s string) (Domain, error) {
	if _, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil || strings.HasPrefix(s, "[") {
		return Domain{}, errors.New("is an IP address; use allow-ip")
	}
	host, port := s, 0
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host = s[:i]
		p, err := parsePort(s[i+1:])
		if err != nil {
			return Domain{}, err
		}
		port = p
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	name, wild := strings.CutPrefix(host, "*.")
	if wild && !strings.Contains(name, ".") {
		// "*.com" would open a whole top-level domain.
		return Domain{}, errors.New("a wildcard needs a domain of two labels or more (*.example.com)")
	}
	if err := checkName(name); err != nil {
		return Domain{}, err
	}
	return Domain{Host: host, Port: port}, nil
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || s[0] < '0' || s[0] > '9' || p < 1 || p > 65535 {
		return 0, errors.New("port must be a number from 1 to 65535")
	}
	return p, nil
}

// checkName accepts a DNS name: dot-separated labels of letters, digits,
// hyphens and underscores, not starting or ending with a hyphen.
func checkName(name string) error {
	if name == "" || len(name) > 253 {
		return errors.New("is not a DNS name")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return errors.New("is not a DNS name")
		}
		for _, c := range l {
			if c == '*' {
				return errors.New("a wildcard may only be a leading \"*.\"")
			}
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return errors.New("is not a DNS name")
			}
		}
	}
	// Resolvers read names like 127.1 or 2130706433 as addresses.
	if _, err := strconv.ParseUint(labels[len(labels)-1], 0, 64); err == nil {
		return errors.New("looks like an IP address; use allow-ip")
	}
	return nil
}

// ParseIP parses an IPv4 or IPv6 address or a canonical CIDR prefix.
func ParseIP(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, errors.New("is not an IP address or CIDR prefix")
		}
		if a.Is4In6() {
			return netip.Prefix{}, fmt.Errorf("write the IPv4 form, %s", a.Unmap())
		}
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, errors.New("is not an IP address or CIDR prefix")
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, errors.New("write IPv4 prefixes in IPv4 form")
	}
	if p != p.Masked() {
		return netip.Prefix{}, fmt.Errorf("has host bits set; write %s", p.Masked())
	}
	return p, nil
}

// allowsName reports whether a lower-case name without trailing dot may be
// reached on port.
func (p *Policy) allowsName(host string, port int) bool {
	for _, d := range p.Domains {
		if d.Port == 0 && port != 80 && port != 443 || d.Port != 0 && port != d.Port {
			continue
		}
		if suffix, wild := strings.CutPrefix(d.Host, "*"); wild {
			if strings.HasSuffix(host, suffix) && len(host) > len(suffix) {
				return true
			}
		} else if host == d.Host {
			return true
		}
	}
	return false
}

func (p *Policy) allowsIP(a netip.Addr) bool {
	for _, pfx := range p.IPs {
		if pfx.Contains(a) {
			return true
		}
	}
	return false
}

// nonPublic are the ranges a name may not lead to unless allow-ip says so,
// most specific first: the proxy runs in the container, so they would reach
// its own services, its neighbours and the cloud's metadata endpoint.
var nonPublic = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("169.254.169.254/32"), "link-local (cloud metadata)"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "unique-local (cloud metadata)"},
	{netip.MustParsePrefix("0.0.0.0/32"), "unspecified"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("0.0.0.0/8"), "reserved"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/8"), "reserved"}, // IPv4-compatible and other IETF-reserved forms
}

// nat64 carries an IPv4 address in its last 32 bits, which a NAT64 gateway
// reaches on the proxy's behalf.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Classify names the class of an address that is not public, or returns ""
// for a public one. IPv4-mapped and NAT64 addresses are judged by the IPv4
// address they carry.
func Classify(a netip.Addr) string {
	if !a.IsValid() {
		return "invalid"
	}
	a = a.WithZone("").Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	for _, n := range nonPublic {
		if n.prefix.Contains(a) {
			return n.class
		}
	}
	return ""
}

// Allows decides on host:port as written, before any lookup: an IP literal
// by allow-ip, a name by allow-domain. The error text is the reason for a
// refusal.
func (p *Policy) Allows(host string, port int) error {
	if a, err := netip.ParseAddr(host); err == nil {
		if !p.allowsIP(a.Unmap()) {
			return errors.New("IP address not in allow-ip")
		}
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if !p.allowsName(name, port) {
		if preset := presetFor(name, port); preset != "" {
			return fmt.Errorf("not in the allowlist; allow-preset = %s would let it through", preset)
		}
		return errors.New("not in the allowlist")
	}
	return nil
}

// Check decides whether host:port may be reached and returns the addresses
// to dial, in order. The error text is the reason for a refusal.
func (p *Proxy) Check(ctx context.Context, host string, port int) ([]netip.Addr, error) {
	if err := p.Policy.Allows(host, port); err != nil {
		return nil, err
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	resolve := p.Resolve
	if resolve == nil {
		resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	addrs, err := resolve(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve: %v", err)
	}
	var ok []netip.Addr
	var refused string
	for _, a := range addrs {
		a = a.Unmap()
		if class := Classify(a); class != "" && !p.Policy.allowsIP(a) {
			if refused == "" {
				refused = fmt.Sprintf("resolves to %s address %s", class, a)
			}
			continue
		}
		ok = append(ok, a)
	}
	switch {
	case len(ok) > 0:
		return ok, nil
	case refused != "":
		return nil, errors.New(refused)
	}
	return nil, errors.New("resolves to no address")
}
