package forgeapi

import (
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/requesttarget"
)

// Gate decides each request the sandbox sends a forge host, but a push,
// before the forge sees it and before the user's credential is added.
type Gate struct {
	rules Rules
}

// NewGate is a gate with the rules.
func NewGate(r Rules) *Gate { return &Gate{rules: r} }

// Check decides r, sent to a forge host; api says the host serves the
// GitHub API at its root (api.github.com), where the policy's default
// writes hold. An empty answer lets r go on; any other is why it was
// refused. Check may read r's body, and then gives r the same bytes.
//
// What goes on: a read (GET, HEAD, with no body) but a GraphQL mutation
// sent as one; git's own protocol on a forge's host (a fetch, LFS's batch,
// lock and upload requests; a push is the push gate's); a GraphQL request
// whose every mutation a rule names; and a REST write whose route a rule
// names. Nothing else: another method, a route in a spelling a router may
// read differently, a method overridden by a header, a parameter or a form.
func (g *Gate) Check(api bool, r *http.Request) string {
	if why := overridden(r); why != "" {
		return why
	}
	graphQL := strings.EqualFold(r.URL.Path, graphQLPath(api))
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if r.ContentLength != 0 {
			// A router may read parameters from any request's body (Rails
			// parses a JSON body whatever the method): a GraphQL server
			// could run a mutation in the body of a read.
			return r.Method + " " + r.URL.Path + ": a read with a body is not sent to a forge"
		}
		if graphQL {
			return g.checkGraphQLQuery(api, r.URL)
		}
		return ""
	}
	segs, why := segments(r.URL)
	if why != "" {
		return r.Method + " " + r.URL.EscapedPath() + ": " + why
	}
	if graphQL {
		if r.Method != http.MethodPost || r.URL.Path != graphQLPath(api) {
			return r.Method + " " + r.URL.Path + " is not in forge-api: GraphQL is sent only as POST " + graphQLPath(api)
		}
		return g.checkGraphQLBody(api, r)
	}
	if !api && gitProtocol(r.Method, segs) {
		return ""
	}
	if mt, ok := mediaType(r); !ok || mt == "application/x-www-form-urlencoded" || strings.HasPrefix(mt, "multipart/") {
		// A router may take the method from a form (Rack's
		// MethodOverride reads _method); the API reads JSON.
		return r.Method + " " + r.URL.Path + ": a form body, or a Content-Type that does not parse, is not sent to a forge's API"
	}
	return allows(g.rules.list(api), func(rule Rule) bool { return rule.matchesRoute(r.Method, segs) }, r.Method+" "+r.URL.Path)
}

// methodOverrides are the headers by which a router may take a request for
// another method than it was sent with.
var methodOverrides = []string{"X-Http-Method-Override", "X-Http-Method", "X-Method-Override"}

// overridden says why r names another method than its own, if it does.
func overridden(r *http.Request) string {
	for _, h := range methodOverrides {
		if _, ok := r.Header[h]; ok {
			return "a request that names another method (" + h + ") is not sent to a forge"
		}
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		// Routers take _method for a write only (a search may hold the
		// word).
		return ""
	}
	// In any spelling a query parser may read: Go's drops a pair with a
	// ";", which some parsers take for a separator.
	query := strings.ToLower(r.URL.RawQuery)
	if unescaped, err := url.QueryUnescape(query); err == nil {
		query += " " + strings.ToLower(unescaped)
	}
	if strings.Contains(query, "_method") {
		return "a request that names another method (_method) is not sent to a forge"
	}
	return ""
}

// graphQLPath is the host's GraphQL endpoint: /graphql on the GitHub API's
// host, /api/graphql on a forge's (GitHub Enterprise Server, GitLab). The
// gate takes it in any case for the endpoint, so that no REST rule
// covers it in a spelling a router may fold.
func graphQLPath(api bool) string {
	if api {
		return "/graphql"
	}
	return "/api/graphql"
}

// segments are the path's segments, decoded, or why the path is refused:
// a write's path must read the same to any router on the way, so it is a
// plain path (requesttarget.Plain, as for Claude's login: no empty, "."
// or ".." segment, no escape but of a letter, digit, - _ ~, no ; : @ \),
// whose escapes then decode to nothing a router reads apart.
func segments(u *url.URL) ([]string, string) {
	if !requesttarget.Plain(u.EscapedPath()) {
		return nil, "a write's path is sent only plain: segments of letters, digits, - . _ ~ and escapes of those but the dot, none empty, . or .."
	}
	return strings.Split(u.Path[1:], "/"), ""
}

// gitProtocol says whether a request is git's own on a forge's host: a
// fetch's POST .../git-upload-pack, or git LFS's batch and lock requests
// and an object's upload where the forge keeps LFS objects itself (PUT
// .../info/lfs/objects/OID, as Gitea does; GitHub's go to a storage host
// of their own). None of them moves a ref; the API (/api/...) is no
// repository.
func gitProtocol(method string, segs []string) bool {
	if strings.EqualFold(segs[0], "api") {
		return false
	}
	end := func(tail ...string) bool {
		if len(segs) <= len(tail) {
			return false
		}
		for i, t := range tail {
			if s := segs[len(segs)-len(tail)+i]; t != "*" && s != t {
				return false
			}
		}
		return true
	}
	switch method {
	case http.MethodPost:
		return end("git-upload-pack") ||
			end("info", "lfs", "objects", "batch") ||
			end("info", "lfs", "locks") ||
			end("info", "lfs", "locks", "verify") ||
			end("info", "lfs", "locks", "*", "unlock")
	case http.MethodPut:
		return end("info", "lfs", "objects", "*") && !end("info", "lfs", "objects", "batch")
	}
	return false
}

// mediaType is r's Content-Type without its parameters, lower case, ""
// when it names none; false when it does not parse or is given twice.
func mediaType(r *http.Request) (string, bool) {
	cts := r.Header.Values("Content-Type")
	switch len(cts) {
	case 0:
		return "", true
	case 1:
	default:
		return "", false
	}
	mt, _, err := mime.ParseMediaType(cts[0])
	return mt, err == nil
}
