package requesttarget_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/requesttarget"
)

// plainTargets are request targets of Claude Code's, and of the API's
// shapes, that the credential proxy forwards.
var plainTargets = []string{
	"/v1/messages?beta=true",
	"/v1/messages/count_tokens?beta=true",
	"/v1/models?limit=1000&after_id=claude-3-5",
	"/v1/files/file_011CNha8iCJcU1wXNR6q4V8w",
	"/api/oauth/claude_cli/create_api_key",
	"/api/hello",
	"/v1/messages?beta=true&q=%2F%2Fhost/x:y@z",
	"/v1/claude-opus-4.5/x",
	"/v1/~user/%41b",
}

// hostileTargets are every form a URL parser, a gateway's normaliser or a
// server behind it could read as another host, another path outside the
// base, or another request.
var hostileTargets = []string{
	"",
	"*",
	"v1/messages",
	"//evil.test/v1/messages",         // network-path reference
	"///evil.test/x",                  // some parsers collapse to //evil.test
	"/v1//evil.test/x",                // empty segment: merged slashes, or a join
	"/v1/messages/",                   // empty last segment
	"/",                               // the base itself, an empty segment
	"/v1/messages//",                  // two empty segments
	"http://evil.test/v1/x",           // absolute form
	"https://evil.test/v1/x",          // absolute form
	"HTTP://evil.test/v1/x",           // absolute form, scheme in capitals
	"evil.test:443",                   // authority form
	"evil.test:443/v1",                // a scheme "evil.test" to some parsers
	"\\\\evil.test\\v1",               // UNC path
	"/\\evil.test/v1",                 // WHATWG reads \ as /: //evil.test
	"/v1\\..\\..\\admin",              // backslash dot segments
	"/%2F%2Fevil.test/x",              // encoded slashes, decoded by gateways
	"/%2f/evil.test",                  // an encoded slash in lower case
	"/%5C%5Cevil.test/x",              // encoded backslashes
	"/v1/%2e%2e/admin",                // encoded dot segment
	"/v1/.%2E/admin",                  // half-encoded dot segment
	"/v1/%2e/x",                       // encoded single dot
	"/v1/../admin",                    // dot segment
	"/v1/./x",                         // single dot
	"/v1/...",                         // dots only (Windows trims them)
	"/v1/%252e%252e/admin",            // second encoding
	"/v1/%25/x",                       // an encoded percent sign
	"/v1/%",                           // a broken escape
	"/v1/%4",                          // a broken escape
	"/v1/%zz",                         // not hexadecimal
	"/v1/%00x",                        // NUL
	"/v1/..;/admin",                   // Tomcat path parameter
	"/v1;jsessionid=x/messages",       // path parameter
	"/v1/messages;x",                  // path parameter
	"/evil.test@api/x",                // userinfo
	"/user@evil.test/x",               // userinfo in the first segment
	"/evil.test:80/x",                 // a port in the first segment
	"/[::1]/x",                        // IPv6 brackets
	"/[::1]:80/x",                     // IPv6 with a port
	"/v1/messages#frag",               // a fragment in the path
	"/v1/messages?beta=true#x",        // a fragment after the query
	"/v1#/../admin",                   // a fragment that hides a dot segment
	"/v1/mess ages",                   // a space
	"/v1/messages\t",                  // a tab
	"/v1/messages\r\nHost: evil.test", // a header injected
	"/v1/messages?x=\r\nHost: evil.test",
	"/v1/messages?x=a b",
	"/v1/messages?x=\\evil",
	"/v1/m\u00e9ssages",     // non-ASCII
	"/v1/messages?q=\u00e9", // non-ASCII in the query
	"/v1/%C3%A9",            // encoded non-ASCII
	"/v1/\x7f",              // DEL
	"/v1/messages?\x00",     // NUL in the query
}

func TestPlain(t *testing.T) {
	base, _ := url.Parse("https://api.test/gateway/anthropic/")
	for _, target := range plainTargets {
		if !requesttarget.Plain(target) {
			t.Errorf("Plain(%q) = false; it is a plain path under the base", target)
			continue
		}
		// A gateway that resolves the joined target as a reference stays
		// on the base's host, under the base's path.
		ref, err := url.Parse(strings.TrimSuffix(base.Path, "/") + target)
		if err != nil {
			t.Errorf("%q does not parse: %v", target, err)
			continue
		}
		got := base.ResolveReference(ref)
		if got.Host != base.Host || !strings.HasPrefix(got.Path, base.Path) {
			t.Errorf("%q joined to %s resolves to %s", target, base, got)
		}
	}
	for _, target := range hostileTargets {
		if requesttarget.Plain(target) {
			t.Errorf("Plain(%q) = true; want it refused", target)
		}
	}
}
