package forgeapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// githubDefaults stand for the policy's list (sandbox.forgeAPIWrites), so
// this package's tests do not depend on its contents.
var githubDefaults = []string{
	"POST /repos/*/*/issues",
	"POST /repos/*/*/issues/*/comments",
	"PATCH /repos/*/*/issues/comments/*",
	"POST /repos/*/*/pulls",
	"mutation addComment",
	"mutation createPullRequest",
}

func mustRules(t *testing.T, lines ...string) []Rule {
	t.Helper()
	var out []Rule
	for _, l := range lines {
		r, err := ParseRule(l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func graphQL(query string) string {
	b, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{}})
	return string(b)
}

type request struct {
	name   string
	api    bool // sent to the GitHub API's host
	method string
	target string
	body   string
	header map[string]string
	ok     bool
	why    string // a part of the refusal's reason
}

func (c request) build() *http.Request {
	r := httptest.NewRequest(c.method, "https://forge.test"+c.target, strings.NewReader(c.body))
	for k, v := range c.header {
		if k == "Transfer-Encoding" {
			// As net/http reads a chunked body: of unknown length.
			r.TransferEncoding, r.ContentLength = []string{v}, -1
			continue
		}
		r.Header.Set(k, v)
	}
	return r
}

func TestCheck(t *testing.T) {
	gate := NewGate(Rules{
		Defaults: mustRules(t, githubDefaults...),
		// POST /graphql names the endpoint as a route: no spelling of it
		// may skip the GraphQL reading.
		Admin: mustRules(t, "POST /api/v4/projects/*/merge_requests", "mutation createNote", "!POST /repos/*/*/pulls", "POST /graphql", "PUT /graphql"),
	})
	cases := []request{
		// Reads.
		{name: "a read", api: true, method: "GET", target: "/repos/o/r/git/refs/heads/main", ok: true},
		{name: "a head", api: true, method: "HEAD", target: "/repos/o/r", ok: true},
		{name: "a read on the forge", method: "GET", target: "/o/r.git/info/refs?service=git-upload-pack", ok: true},
		{name: "a read in lower case is no read", api: true, method: "get", target: "/repos/o/r", why: "not in forge-api"},
		{name: "a read with a body", api: true, method: "GET", target: "/graphql", body: `{"query":"mutation { updateRef(input:{}) { clientMutationId } }"}`, header: map[string]string{"Content-Type": "application/json"}, why: "a read with a body"},
		{name: "a read with a body of unknown length", api: true, method: "GET", target: "/repos/o/r", body: "x", header: map[string]string{"Transfer-Encoding": "chunked"}, why: "a read with a body"},
		{name: "OPTIONS is no read", api: true, method: "OPTIONS", target: "/repos/o/r", why: "not in forge-api"},

		// REST writes.
		{name: "a default write", api: true, method: "POST", target: "/repos/o/r/issues", body: `{"title":"x"}`, ok: true},
		{name: "a default write, any case", api: true, method: "POST", target: "/repos/o/r/Issues", body: `{}`, ok: true},
		{name: "a comment's edit", api: true, method: "PATCH", target: "/repos/o/r/issues/comments/7", body: `{}`, ok: true},
		{name: "a ref moved by the API", api: true, method: "PATCH", target: "/repos/o/r/git/refs/heads/main", body: `{"sha":"1","force":true}`, why: "PATCH /repos/o/r/git/refs/heads/main is not in forge-api"},
		{name: "a ref made by the API", api: true, method: "POST", target: "/repos/o/r/git/refs", body: `{}`, why: "not in forge-api"},
		{name: "a ref deleted by the API", api: true, method: "DELETE", target: "/repos/o/r/git/refs/heads/x", why: "not in forge-api"},
		{name: "a file committed by the API", api: true, method: "PUT", target: "/repos/o/r/contents/README.md", body: `{}`, why: "not in forge-api"},
		{name: "a merge", api: true, method: "PUT", target: "/repos/o/r/pulls/1/merge", body: `{}`, why: "not in forge-api"},
		{name: "branches merged", api: true, method: "POST", target: "/repos/o/r/merges", body: `{}`, why: "not in forge-api"},
		{name: "the default branch changed", api: true, method: "PATCH", target: "/repos/o/r", body: `{"default_branch":"x"}`, why: "not in forge-api"},
		{name: "a deploy key", api: true, method: "POST", target: "/repos/o/r/keys", body: `{}`, why: "not in forge-api"},
		{name: "a workflow run", api: true, method: "POST", target: "/repos/o/r/actions/workflows/ci.yml/dispatches", body: `{}`, why: "not in forge-api"},
		{name: "a default taken away", api: true, method: "POST", target: "/repos/o/r/pulls", body: `{}`, why: "taken away by forge-api = !POST /repos/*/*/pulls"},
		{name: "a default one segment longer", api: true, method: "POST", target: "/repos/o/r/issues/1", body: `{}`, why: "not in forge-api"},
		{name: "the defaults hold on the GitHub API only", method: "POST", target: "/repos/o/r/issues", body: `{}`, why: "not in forge-api"},
		{name: "an admin's route on a forge", method: "POST", target: "/api/v4/projects/5/merge_requests", body: `{}`, ok: true},
		{name: "an admin's route on the API too", api: true, method: "POST", target: "/api/v4/projects/5/merge_requests", body: `{}`, ok: true},

		// Spellings a router may read otherwise.
		{name: "an escaped slash", api: true, method: "POST", target: "/repos/o/r/issues%2F..%2F..%2Fgit%2Frefs", why: "POST /repos/o/r/issues%2F..%2F..%2Fgit%2Frefs: a write's path is sent only plain"},
		{name: "an escaped backslash", api: true, method: "POST", target: "/repos/o/r/issues%5C", why: "sent only plain"},
		{name: "dot dot", api: true, method: "POST", target: "/repos/o/r/git/refs/../../issues", why: "sent only plain"},
		{name: "escaped dot dot", api: true, method: "POST", target: "/repos/o/r/git/refs/%2e%2e/%2e%2e/issues", why: "sent only plain"},
		{name: "a double slash", api: true, method: "POST", target: "/repos/o/r//issues", why: "sent only plain"},
		{name: "a trailing slash", api: true, method: "POST", target: "/repos/o/r/issues/", why: "sent only plain"},
		{name: "an escaped dot", api: true, method: "POST", target: "/repos/o/r/issues/%2e", why: "sent only plain"},
		{name: "an escaped name", api: true, method: "POST", target: "/repos/o/r/%69ssues", body: `{}`, ok: true},
		{name: "a colon", api: true, method: "POST", target: "/repos/o/r/issues:x", why: "sent only plain"},
		{name: "a matrix parameter", api: true, method: "POST", target: "/repos/o/r/issues;x=1", why: "sent only plain"},
		{name: "a method override header", api: true, method: "POST", target: "/repos/o/r/issues", header: map[string]string{"X-HTTP-Method-Override": "DELETE"}, why: "X-Http-Method-Override"},
		{name: "a method override on a read", api: true, method: "GET", target: "/repos/o/r", header: map[string]string{"X-Method-Override": "DELETE"}, why: "another method"},
		{name: "a method override parameter", api: true, method: "POST", target: "/repos/o/r/issues?_method=DELETE", why: "_method"},
		{name: "an escaped method override parameter", api: true, method: "POST", target: "/repos/o/r/issues?%5FMETHOD=DELETE", why: "_method"},
		{name: "a method override parameter after a semicolon", api: true, method: "POST", target: "/repos/o/r/issues?x=1;_method=DELETE", why: "_method"},
		{name: "a search for the word", api: true, method: "GET", target: "/search/code?q=_method", ok: true},
		{name: "a form body", api: true, method: "POST", target: "/repos/o/r/issues", body: "_method=DELETE", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, why: "form body"},
		{name: "a multipart body", api: true, method: "POST", target: "/repos/o/r/issues", header: map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, why: "form body"},
		{name: "a type that does not parse", api: true, method: "POST", target: "/repos/o/r/issues", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded;;"}, why: "does not parse"},

		// git's own protocol.
		{name: "a fetch", method: "POST", target: "/o/r.git/git-upload-pack", ok: true},
		{name: "a fetch without .git", method: "POST", target: "/o/r/git-upload-pack", ok: true},
		{name: "LFS's batch", method: "POST", target: "/o/r.git/info/lfs/objects/batch", ok: true},
		{name: "LFS's lock", method: "POST", target: "/o/r.git/info/lfs/locks", ok: true},
		{name: "LFS's locks verified", method: "POST", target: "/o/r.git/info/lfs/locks/verify", ok: true},
		{name: "LFS's unlock", method: "POST", target: "/o/r.git/info/lfs/locks/12/unlock", ok: true},
		{name: "LFS's upload", method: "PUT", target: "/o/r.git/info/lfs/objects/4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393", ok: true},
		{name: "LFS's upload, not an object", method: "PUT", target: "/o/r.git/info/lfs/objects/batch", why: "not in forge-api"},
		{name: "LFS's upload, a level deeper", method: "PUT", target: "/o/r.git/info/lfs/objects/a/b", why: "not in forge-api"},
		{name: "LFS's upload on the API's host", api: true, method: "PUT", target: "/o/r.git/info/lfs/objects/4d7a", why: "not in forge-api"},
		{name: "a fetch at the API's root", method: "POST", target: "/api/v4/git-upload-pack", why: "not in forge-api"},
		{name: "git on the API's host", api: true, method: "POST", target: "/o/r/git-upload-pack", why: "not in forge-api"},
		{name: "git's name alone", method: "POST", target: "/git-upload-pack", why: "not in forge-api"},
		{name: "a fetch, another method", method: "PUT", target: "/o/r.git/git-upload-pack", why: "not in forge-api"},

		// GraphQL.
		{name: "a query", api: true, method: "POST", target: "/graphql", body: graphQL(`query { viewer { login } }`), ok: true},
		{name: "a query's shorthand", api: true, method: "POST", target: "/graphql", body: graphQL(`{ viewer { login } }`), ok: true},
		{name: "an allowed mutation", api: true, method: "POST", target: "/graphql", body: graphQL(`mutation($id:ID!){ addComment(input:{subjectId:$id, body:"x"}) { clientMutationId } }`), ok: true},
		{name: "an admin's mutation on a forge", method: "POST", target: "/api/graphql", body: graphQL(`mutation { createNote(input:{}) { note { id } } }`), ok: true},
		{name: "a default mutation off the GitHub API", method: "POST", target: "/api/graphql", body: graphQL(`mutation { addComment(input:{}) { clientMutationId } }`), why: "the mutation addComment is not in forge-api"},
		{name: "updateRef", api: true, method: "POST", target: "/graphql", body: graphQL(`mutation { updateRef(input:{refId:"x", oid:"y", force:true}) { clientMutationId } }`), why: "the mutation updateRef is not in forge-api"},
		{name: "behind an alias", api: true, method: "POST", target: "/graphql", body: graphQL(`mutation { addComment: updateRef(input:{}) { clientMutationId } }`), why: "updateRef"},
		{name: "second of two fields", api: true, method: "POST", target: "/graphql", body: graphQL(`mutation { addComment(input:{}) { clientMutationId } mergePullRequest(input:{}) { clientMutationId } }`), why: "mergePullRequest"},
		{name: "in a fragment", api: true, method: "POST", target: "/graphql", body: graphQL(`mutation { ...F } fragment F on Mutation { createCommitOnBranch(input:{}) { clientMutationId } }`), why: "createCommitOnBranch"},
		{name: "in a fragment in a fragment", api: true, method: "POST", target: "/graphql", body: graphQL(`mutation { ...F } fragment F on Mutation { ...G } fragment G on Mutation { deleteRef(input:{}) { clientMutationId } }`), why: "deleteRef"},
		{name: "in an inline fragment", api: true, method: "POST", target: "/graphql", body: graphQL(`mutation { ... on Mutation { updateRepository(input:{}) { clientMutationId } } }`), why: "updateRepository"},
		{name: "under a skip", api: true, method: "POST", target: "/graphql", body: graphQL(`mutation($no:Boolean!) { updateRef(input:{}) @skip(if:$no) { clientMutationId } }`), why: "updateRef"},
		{name: "a second operation", api: true, method: "POST", target: "/graphql", body: `{"query":"query A { viewer { login } } mutation B { updateRef(input:{}) { clientMutationId } }","operationName":"A"}`, why: "updateRef"},
		{name: "a fragment defined twice", api: true, method: "POST", target: "/graphql", body: graphQL(`mutation { ...F } fragment F on Mutation { addComment(input:{}) { clientMutationId } } fragment F on Mutation { updateRef(input:{}) { clientMutationId } }`), why: "defined twice"},
		{name: "an undefined fragment", api: true, method: "POST", target: "/graphql", body: graphQL(`mutation { ...F }`), why: "not defined"},
		{name: "a subscription", api: true, method: "POST", target: "/graphql", body: graphQL(`subscription { x }`), why: "subscription"},
		{name: "not GraphQL", api: true, method: "POST", target: "/graphql", body: graphQL(`mutation { updateRef(`), why: "does not parse"},
		{name: "a batch", api: true, method: "POST", target: "/graphql", body: `[{"query":"{ viewer { login } }"}]`, why: "no batch"},
		{name: "a query twice", api: true, method: "POST", target: "/graphql", body: `{"query":"{ viewer { login } }","query":"mutation { updateRef(input:{}) { clientMutationId } }"}`, why: `not "query"`},
		{name: "a persisted query", api: true, method: "POST", target: "/graphql", body: `{"query":"{ viewer { login } }","extensions":{"persistedQuery":{"sha256Hash":"x"}}}`, why: `not "extensions"`},
		{name: "an id for a stored document", api: true, method: "POST", target: "/graphql", body: `{"documentId":"x"}`, why: `not "documentId"`},
		{name: "no query", api: true, method: "POST", target: "/graphql", body: `{"variables":{}}`, why: "without a query"},
		{name: "a query that is no string", api: true, method: "POST", target: "/graphql", body: `{"query":["mutation { updateRef }"]}`, why: "not a string"},
		{name: "text after the object", api: true, method: "POST", target: "/graphql", body: `{"query":"{ viewer { login } }"} {"query":"mutation { updateRef }"}`, why: "nothing after it"},
		{name: "a form", api: true, method: "POST", target: "/graphql", body: "query=mutation+%7B+updateRef+%7D", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, why: "as JSON"},
		{name: "application/graphql", api: true, method: "POST", target: "/graphql", body: "mutation { updateRef }", header: map[string]string{"Content-Type": "application/graphql"}, why: "as JSON"},
		{name: "JSON typed", api: true, method: "POST", target: "/graphql", body: graphQL(`{ viewer { login } }`), header: map[string]string{"Content-Type": "application/json; charset=utf-8"}, ok: true},
		{name: "gzip", api: true, method: "POST", target: "/graphql", body: "x", header: map[string]string{"Content-Encoding": "gzip"}, why: "content coding"},
		{name: "a mutation in a read", api: true, method: "GET", target: "/graphql?query=mutation+%7B+updateRef(input:%7B%7D)+%7B+clientMutationId+%7D+%7D", why: "updateRef"},
		{name: "a query in a read", api: true, method: "GET", target: "/graphql?query=%7B+viewer+%7B+login+%7D+%7D", ok: true},
		{name: "two queries in a read", api: true, method: "GET", target: "/graphql?query=%7Bx%7D&QUERY=%7By%7D", why: "more than one"},
		{name: "GraphQL in another spelling", api: true, method: "POST", target: "/graphql/", body: graphQL(`mutation { addComment(input:{}) { clientMutationId } }`), why: "sent only plain"},
		{name: "GraphQL by another method", api: true, method: "PUT", target: "/graphql", body: graphQL(`mutation { updateRef(input:{}) { clientMutationId } }`), why: "not in forge-api"},
		{name: "a mutation in a read in capitals", api: true, method: "GET", target: "/GRAPHQL?query=mutation+%7B+updateRef(input:%7B%7D)+%7B+clientMutationId+%7D+%7D", why: "updateRef"},
		{name: "GraphQL in capitals", api: true, method: "POST", target: "/GraphQL", body: graphQL(`mutation { addComment(input:{}) { clientMutationId } }`), why: "not in forge-api"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			why := gate.Check(c.api, c.build())
			switch {
			case c.ok && why != "":
				t.Errorf("refused: %s", why)
			case !c.ok && why == "":
				t.Errorf("let through")
			case !c.ok && !strings.Contains(why, c.why):
				t.Errorf("refused for %q, want a reason with %q", why, c.why)
			}
		})
	}
}

// TestCheckKeepsTheBody: a GraphQL request the gate read reaches the forge
// whole, with its length.
func TestCheckKeepsTheBody(t *testing.T) {
	gate := NewGate(Rules{Defaults: mustRules(t, githubDefaults...)})
	body := graphQL(`mutation { addComment(input:{}) { clientMutationId } }`)
	r := httptest.NewRequest("POST", "https://api.github.com/graphql", strings.NewReader(body))
	if why := gate.Check(true, r); why != "" {
		t.Fatal(why)
	}
	got, _ := io.ReadAll(r.Body)
	if string(got) != body || r.ContentLength != int64(len(body)) {
		t.Errorf("the forge gets %q (length %d), want %q", got, r.ContentLength, body)
	}
}

// TestCheckBoundsGraphQL: a GraphQL request over the bound is refused, not
// read whole.
func TestCheckBoundsGraphQL(t *testing.T) {
	gate := NewGate(Rules{})
	body := `{"query":"{ viewer { login } }","variables":{"x":"` + strings.Repeat("a", MaxGraphQLBody) + `"}}`
	r := httptest.NewRequest("POST", "https://api.github.com/graphql", strings.NewReader(body))
	if why := gate.Check(true, r); !strings.Contains(why, "over") {
		t.Errorf("a request over the bound: %q", why)
	}
}

func TestParseRule(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{in: "POST /repos/*/*/issues", want: "POST /repos/*/*/issues"},
		{in: "!PATCH /Repos/*/*/Pulls/*", want: "!PATCH /repos/*/*/pulls/*"},
		{in: "mutation createIssue", want: "mutation createIssue"},
		{in: "!mutation addComment", want: "!mutation addComment"},
		{in: "GET /repos", err: "a read needs no rule"},
		{in: "post /repos", err: "post is neither a write method"},
		{in: "POST repos", err: "starts with /"},
		{in: "POST /", err: "starts with /"},
		{in: "POST /repos//issues", err: `segment ""`},
		{in: "POST /repos/../x", err: `segment ".."`},
		{in: "POST /repos/o*/x", err: `segment "o*"`},
		{in: "POST /repos/%2F", err: `segment "%2F"`},
		{in: "POST /a /b", err: "neither"},
		{in: "mutation", err: "neither"},
		{in: "mutation add-comment", err: "not a GraphQL field name"},
		{in: "mutation 1x", err: "not a GraphQL field name"},
	} {
		r, err := ParseRule(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseRule(%q) = %v, want an error with %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("ParseRule(%q): %v", c.in, err)
		case c.err == "" && r.String() != c.want:
			t.Errorf("ParseRule(%q) = %s, want %s", c.in, r, c.want)
		}
	}
}
