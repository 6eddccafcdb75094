// Package forgeapi decides which of the sandbox's requests to a forge may
// go on with the user's credential (ADR 0044): every read, git's own
// protocol, and of the writes only those an admin's list names (a route of
// the REST API, or a GraphQL mutation); a push goes through forgepush.
package forgeapi

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Rule is one line of forge-api: a write the API may be asked, or, led by
// "!", one taken away.
//
//	[!]METHOD /path/with/*/segments   a REST route; * is any one segment
//	[!]mutation NAME                  a GraphQL mutation, by its field name
type Rule struct {
	not      bool
	method   string   // POST, PUT, PATCH or DELETE; "" for a mutation
	path     []string // the route's segments, lower case
	mutation string
}

// writeMethods are the methods a route may name: the ones that change
// something. Reads go on without a rule.
var writeMethods = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// mutationName is GraphQL's Name.
var mutationName = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]*$`)

// routeSegment is what a segment of a route may hold: a word of a path
// that needs no escape, or *.
var routeSegment = regexp.MustCompile(`^(\*|[A-Za-z0-9_.~-]+)$`)

// ParseRule reads one forge-api line.
func ParseRule(s string) (Rule, error) {
	var r Rule
	body, not := strings.CutPrefix(s, "!")
	r.not = not
	kind, arg, ok := strings.Cut(body, " ")
	arg = strings.TrimSpace(arg)
	if !ok || arg == "" || strings.ContainsAny(arg, " \t") {
		return Rule{}, fmt.Errorf("%q is neither METHOD /path nor mutation NAME", s)
	}
	if kind == "mutation" {
		if !mutationName.MatchString(arg) {
			return Rule{}, fmt.Errorf("%q: %q is not a GraphQL field name", s, arg)
		}
		r.mutation = arg
		return r, nil
	}
	if !isWriteMethod(kind) {
		return Rule{}, fmt.Errorf("%q: %s is neither a write method (%s) nor mutation; a read needs no rule", s, kind, strings.Join(writeMethods, ", "))
	}
	r.method = kind
	segs, why := routeSegments(arg)
	if why != "" {
		return Rule{}, fmt.Errorf("%q: %s", s, why)
	}
	r.path = segs
	return r, nil
}

func isWriteMethod(m string) bool {
	for _, w := range writeMethods {
		if m == w {
			return true
		}
	}
	return false
}

// routeSegments splits a route's path into its segments, lower case.
func routeSegments(p string) ([]string, string) {
	if !strings.HasPrefix(p, "/") || p == "/" {
		return nil, "a route's path starts with / and names at least one segment"
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if !routeSegment.MatchString(s) || s == "." || s == ".." {
			return nil, fmt.Sprintf("the segment %q is neither * nor a plain word (letters, digits, - _ . ~)", s)
		}
		segs[i] = strings.ToLower(s)
	}
	return segs, ""
}

func (r Rule) String() string {
	not := ""
	if r.not {
		not = "!"
	}
	if r.mutation != "" {
		return not + "mutation " + r.mutation
	}
	return not + r.method + " /" + strings.Join(r.path, "/")
}

// matchesRoute says whether the rule names a request of method to the
// path whose segments are segs. Segments compare in any case: a forge
// that folds case reads what the rule names, and one that does not finds
// no such route.
func (r Rule) matchesRoute(method string, segs []string) bool {
	if r.method == "" || r.method != method || len(r.path) != len(segs) {
		return false
	}
	for i, p := range r.path {
		if p != "*" && p != strings.ToLower(segs[i]) {
			return false
		}
	}
	return true
}

// Rules are the writes a forge's API may be asked: Admin, the conf's lines,
// on every forge host; Defaults, the policy's list for the GitHub API, on
// the hosts that serve it. A write is let through when a rule names it and
// no "!" rule does.
type Rules struct {
	Admin    []Rule
	Defaults []Rule
}

// list is the rules that hold on one host.
func (rs Rules) list(github bool) []Rule {
	if !github {
		return rs.Admin
	}
	return append(append([]Rule(nil), rs.Defaults...), rs.Admin...)
}

// allows says whether the rules let the write through, and else why not.
func allows(rules []Rule, match func(Rule) bool, what string) string {
	allowed := false
	for _, r := range rules {
		if !match(r) {
			continue
		}
		if r.not {
			return what + " is taken away by forge-api = " + r.String()
		}
		allowed = true
	}
	if !allowed {
		return what + " is not in forge-api"
	}
	return ""
}
