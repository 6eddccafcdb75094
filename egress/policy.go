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
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/hostaddr"
)

// Policy is what the proxy lets through: the allowlist the conf's
// allow-domain and allow-ip lines parse to.
type Policy = hostaddr.Allowlist

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

// Check decides whether host:port may be reached by access and returns the
// addresses to dial, in order. The error text is the reason for a refusal.
func (p *Proxy) Check(ctx context.Context, host string, port int, access hostaddr.Access) ([]netip.Addr, error) {
	if err := p.Policy.Allows(host, port, access); err != nil {
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
		return nil, fmt.Errorf("cannot resolve: %w", err)
	}
	var ok []netip.Addr
	var refused string
	for _, a := range addrs {
		a = a.Unmap()
		if class := Classify(a); class != "" && !p.Policy.AllowsIP(a) {
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
