package forgeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// MaxGraphQLBody is the most of a GraphQL request the gate reads; a longer
// one is refused. A client's queries are a few KiB.
const MaxGraphQLBody = 1 << 20

// checkGraphQLBody reads a GraphQL POST, decides it, and gives r the same
// bytes.
func (g *Gate) checkGraphQLBody(api bool, r *http.Request) string {
	what := "POST " + r.URL.Path
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return what + ": a GraphQL request in a content coding is not read, so not sent"
	}
	if mt, ok := mediaType(r); !ok || mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		// Another type (a form, a multipart upload) is read by the
		// server otherwise than as the JSON the gate reads.
		return what + ": a GraphQL request is sent as JSON"
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxGraphQLBody+1))
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	switch {
	case err != nil:
		return what + ": the request's body did not read: " + err.Error()
	case len(body) > MaxGraphQLBody:
		return fmt.Sprintf("%s: a GraphQL request over %d bytes is not read, so not sent", what, MaxGraphQLBody)
	}
	query, err := graphQLQuery(body)
	if err != nil {
		return what + ": " + err.Error()
	}
	return g.checkDocument(api, what, query)
}

// checkGraphQLQuery decides a GraphQL request sent as a read: its query in
// the URL, which a server may run as a POST's.
func (g *Gate) checkGraphQLQuery(api bool, u *url.URL) string {
	what := "GET " + u.Path
	var queries []string
	for k, v := range u.Query() {
		if strings.EqualFold(k, "query") {
			queries = append(queries, v...)
		}
	}
	switch len(queries) {
	case 0:
		return ""
	case 1:
		return g.checkDocument(api, what, queries[0])
	}
	return what + ": a GraphQL request with more than one query is not sent"
}

// graphQLKeys are what a GraphQL request's JSON may hold. Another key (a
// persisted query's hash or id, an extension) could have the server run a
// document the gate never read.
var graphQLKeys = map[string]bool{"query": true, "variables": true, "operationName": true}

// graphQLQuery is the document of a GraphQL request's JSON: one object,
// each key once, only graphQLKeys, its query a string.
func graphQLQuery(body []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return "", errors.New("a GraphQL request is one JSON object (no batch)")
	}
	seen := map[string]bool{}
	query, hasQuery := "", false
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return "", errors.New("the GraphQL request is not JSON")
		}
		key, _ := t.(string)
		if !graphQLKeys[key] || seen[key] {
			return "", fmt.Errorf("a GraphQL request holds query, variables and operationName, each once, not %q", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return "", errors.New("the GraphQL request is not JSON")
		}
		if key == "query" {
			if err := json.Unmarshal(v, &query); err != nil {
				return "", errors.New("the GraphQL request's query is not a string")
			}
			hasQuery = true
		}
	}
	if _, err := d.Token(); err != nil {
		return "", errors.New("the GraphQL request is not JSON")
	}
	if _, err := d.Token(); err != io.EOF {
		return "", errors.New("a GraphQL request is one JSON object, and nothing after it")
	}
	if !hasQuery {
		return "", errors.New("a GraphQL request without a query is not sent")
	}
	return query, nil
}

// checkDocument decides a GraphQL document: every operation in it, whichever
// the request names. A query reads; a mutation goes on when a rule names
// each field at its root; a subscription is refused.
func (g *Gate) checkDocument(api bool, what, query string) string {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		return what + ": the GraphQL document does not parse, so it is not sent: " + err.Error()
	}
	defined := map[string]bool{}
	for _, f := range doc.Fragments {
		if defined[f.Name] {
			// The server would refuse it; the gate does not guess which
			// of the two it would read.
			return what + ": the fragment " + f.Name + " is defined twice"
		}
		defined[f.Name] = true
	}
	rules := g.rules.list(api)
	for _, op := range doc.Operations {
		switch op.Operation {
		case ast.Query:
			continue
		case ast.Mutation:
		default:
			return what + ": a GraphQL " + string(op.Operation) + " is not sent"
		}
		names, why := rootFields(doc, op.SelectionSet, map[string]bool{})
		if why != "" {
			return what + ": " + why
		}
		for _, name := range names {
			if why := allows(rules, func(r Rule) bool { return r.mutation == name }, "the mutation "+name); why != "" {
				return what + ": " + why
			}
		}
	}
	return ""
}

// rootFields are the field names at the root of a selection set, through its
// fragments, which are the mutations it runs.
func rootFields(doc *ast.QueryDocument, set ast.SelectionSet, spread map[string]bool) ([]string, string) {
	var names []string
	for _, sel := range set {
		var inner ast.SelectionSet
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name != "__typename" {
				names = append(names, s.Name)
			}
			continue
		case *ast.InlineFragment:
			inner = s.SelectionSet
		case *ast.FragmentSpread:
			if spread[s.Name] {
				continue
			}
			spread[s.Name] = true
			f := doc.Fragments.ForName(s.Name)
			if f == nil {
				return nil, "the fragment " + s.Name + " is spread but not defined"
			}
			inner = f.SelectionSet
		default:
			return nil, "a selection the gate does not know"
		}
		more, why := rootFields(doc, inner, spread)
		if why != "" {
			return nil, why
		}
		names = append(names, more...)
	}
	return names, ""
}
