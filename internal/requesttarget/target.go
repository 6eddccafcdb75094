// Package requesttarget is the one rule for a request target the launcher
// sends on with a credential: a plain absolute path (ADR 0030), read the
// same by every URL parser, router and gateway on the way.
package requesttarget

import (
	"encoding/hex"
	"strings"
)

// Plain reports whether a request's target, as the sandbox sent it,
// is a plain absolute path, with a query or without: the only form that,
// joined to the upstream's base, names a resource under that base on that
// host for every reader. A gateway that resolves the forwarded target as a
// URL reference (RFC 3986 section 5, Go's url.ResolveReference) or
// normalises it takes anything else elsewhere, with the credential: an
// empty segment (//host/x is a network-path reference, /v1//x becomes one
// after a join or a merge of slashes), a scheme or authority (absolute and
// authority forms, *), a . or .. segment (raw, encoded, or Tomcat's ..;),
// a backslash (read as a slash by some), a percent sign that decodes to
// anything but a letter, digit, - _ or ~ (%2F, %5C, %2e, a second
// encoding %25), and ; : @ [ ] (path parameters, userinfo, a port, IPv6
// brackets), which are no part of the API's paths. The query may hold any
// visible ASCII but # and the backslash; control characters, spaces and non-ASCII bytes
// are refused everywhere.
func Plain(target string) bool {
	path, query, _ := strings.Cut(target, "?")
	if !strings.HasPrefix(path, "/") {
		return false
	}
	for seg := range strings.SplitSeq(path[1:], "/") {
		if !plainSegment(seg) {
			return false
		}
	}
	for i := 0; i < len(query); i++ {
		if c := query[i]; c <= ' ' || c >= 0x7f || c == '#' || c == '\\' {
			return false
		}
	}
	return true
}

// plainSegment reports whether one segment of a path is a name: not empty,
// not only dots, of unreserved characters, and percent escapes of
// letters, digits, - _ and ~ only.
func plainSegment(seg string) bool {
	dots := 0
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c == '%' {
			if i+2 >= len(seg) {
				return false
			}
			d, err := hex.DecodeString(seg[i+1 : i+3])
			if err != nil || !nameByte(d[0]) {
				return false
			}
			i += 2
			continue
		}
		if c == '.' {
			dots++
			continue
		}
		if !nameByte(c) {
			return false
		}
	}
	return seg != "" && dots < len(seg)
}

// nameByte is an unreserved character of RFC 3986 but the dot.
func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '~'
}
