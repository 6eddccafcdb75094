// Package hostaddr parses the host names and addresses the conf allows
// (allow-domain, allow-ip) and holds the resulting allowlist. It is a leaf:
// the policy (package sandbox) checks the conf with it, and the egress
// proxy enforces it, without the policy importing the proxy.
package hostaddr

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Allowlist is what the egress proxy lets through.
type Allowlist struct {
	Domains []Domain       // allowed names
	IPs     []netip.Prefix // allow-ip: addresses allowed although not public, and IP-literal destinations
}

// Domain is one allow-domain line.
type Domain struct {
	Host string // lower-case DNS name, or "*.example.com" for any subdomain of example.com (not example.com itself)
	Port int    // 0: a tunnel to 443, plain http:// requests to 80 and 443
}

// Access is how the sandbox asks for a destination.
type Access int

const (
	// Request is a plain http:// request in absolute form: the proxy
	// writes the request on, with the host it checked as its Host.
	Request Access = iota
	// Tunnel is CONNECT: the proxy passes bytes it never reads, so the
	// destination sees whatever host the client names inside. On port 80
	// that is plain HTTP, which shared front ends route by its Host.
	Tunnel
)

// ParseDomain parses HOST[:PORT]. The host is a DNS name, or a name under a
// leading "*."; IP addresses belong in allow-ip.
func ParseDomain(s string) (Domain, error) {
	if _, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil || strings.HasPrefix(s, "[") {
		return Domain{}, errors.New("is an IP address; use allow-ip")
	}
	host, port := s, 0
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host = s[:i]
		p, err := ParsePort(s[i+1:])
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

// ParsePort parses a port number from 1 to 65535, digits only.
func ParsePort(s string) (int, error) {
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

// AllowsName reports whether a lower-case name without trailing dot may be
// reached on port by access. A line without a port opens 443 to both, and
// 80 to requests only: a tunnel to port 80 needs a line that names it.
func (p *Allowlist) AllowsName(host string, port int, access Access) bool {
	for _, d := range p.Domains {
		if !d.opens(port, access) {
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

// opens reports whether the line lets access through to port.
func (d Domain) opens(port int, access Access) bool {
	if d.Port != 0 {
		return port == d.Port
	}
	return port == 443 || port == 80 && access == Request
}

// AllowsIP reports whether allow-ip names a.
func (p *Allowlist) AllowsIP(a netip.Addr) bool {
	for _, pfx := range p.IPs {
		if pfx.Contains(a) {
			return true
		}
	}
	return false
}

// Allows decides on host:port as written, before any lookup: an IP literal
// by allow-ip, a name by allow-domain. The error text is the reason for a
// refusal.
func (p *Allowlist) Allows(host string, port int, access Access) error {
	if a, err := netip.ParseAddr(host); err == nil {
		if !p.AllowsIP(a.Unmap()) {
			return errors.New("IP address not in allow-ip")
		}
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	switch {
	case p.AllowsName(name, port, access):
		return nil
	case access == Tunnel && p.AllowsName(name, port, Request):
		// Only port 80 is open to requests and not to tunnels.
		return fmt.Errorf("a tunnel to port 80 needs allow-domain = %s:80; plain http:// requests (GET http://%s/) go through without it", name, name)
	}
	if preset := presetFor(name, port, access); preset != "" {
		return fmt.Errorf("not in the allowlist; allow-preset = %s would let it through", preset)
	}
	return errors.New("not in the allowlist")
}
