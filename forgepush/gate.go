// Package forgepush decides what a push to a forge may change. The egress
// proxy, which adds the user's credential to requests for the forges the
// admin names, hands each git-receive-pack request body to a Gate before it
// forwards it: the gate reads the commands at the head of the body ("OLD NEW
// REF"), decides each by the admin's ref rules (which refs a push may
// update, delete, or move to a commit that does not descend from the old
// one), and either lets the body through unchanged or answers the push
// itself as receive-pack would, with every ref rejected and why.
//
// The gate refuses what it cannot decide: a head receive-pack would read
// otherwise, a rule on the default branch when the forge names none, a
// fast-forward it cannot prove (ADR 0043).
package forgepush

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
)

// Gate holds the admin's ref rules for one launch. It is safe for
// concurrent use.
type Gate struct {
	rules Rules
}

// NewGate makes a gate that decides by rules.
func NewGate(rules Rules) *Gate { return &Gate{rules: rules} }

// Check reads the head of a git-receive-pack request body (the pkt-line
// commands "OLD NEW REF\0caps", up to the flush packet, and the push
// options), decides each update, and returns a reader that forwards the
// body unchanged (the head it read, then the rest, the pack), or a
// refusal. forge is a transport to that forge with the user's credential
// already added; repo is the repository URL (the request URL without
// /git-receive-pack). err is the body's read error, or a failure of the
// gate's own (a temporary directory, git not found): the push is then
// neither forwarded nor answered as refused.
//
// A forward reader that holds the pack on disk (a fast-forward was
// checked) is also an io.Closer; net/http closes a request body that is.
func (g *Gate) Check(ctx context.Context, forge http.RoundTripper, repo *url.URL, body io.Reader) (forward io.Reader, refused *Refusal, err error) {
	h, err := readHead(body)
	var bad *malformed
	if errors.As(err, &bad) {
		return nil, &Refusal{repo: logged(repo), why: bad.why}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	r := &Refusal{repo: logged(repo), head: h, why: pushOptionsRefused(h)}
	verdicts, why := g.decide(ctx, forge, repo, h)
	r.why = firstOf(r.why, why)
	var checks []Command
	for i, v := range verdicts {
		if v.ancestry {
			checks = append(checks, h.commands[i])
		}
	}
	r.refs = verdicts
	if r.why != "" || r.anyRefused() {
		return nil, r, nil
	}
	if len(checks) == 0 {
		return io.MultiReader(bytes.NewReader(h.raw), body), nil, nil
	}
	pack, notFF, err := fastForwards(ctx, forge, repo, body, checks)
	if errors.Is(err, errPackTooLarge) {
		r.why = err.Error()
		return nil, r, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if len(notFF) == 0 {
		return &heldBody{Reader: io.MultiReader(bytes.NewReader(h.raw), pack), pack: pack}, nil, nil
	}
	pack.Close()
	for i, c := range h.commands {
		if why, ok := notFF[c.Ref]; ok {
			r.refs[i] = verdict{why: why}
		}
	}
	return nil, r, nil
}

// decide decides each command by the rules, learning the default branch
// from the forge when a rule names it; why is set when the gate cannot
// decide any.
func (g *Gate) decide(ctx context.Context, forge http.RoundTripper, repo *url.URL, h *head) (verdicts []verdict, why string) {
	var defaultBranch string
	if slices.ContainsFunc(h.commands, g.rules.needsDefault) {
		var err error
		defaultBranch, err = learnDefaultBranch(ctx, forge, repo)
		if err != nil {
			return make([]verdict, len(h.commands)), "cannot learn the default branch: " + err.Error()
		}
	}
	verdicts = make([]verdict, len(h.commands))
	for i, c := range h.commands {
		verdicts[i] = g.rules.decide(c, defaultBranch)
	}
	return verdicts, ""
}

// pushOptionsRefused refuses push options: a forge reads them as requests
// of their own (GitLab's merge_request.create and
// merge_request.merge_when_pipeline_succeeds open and merge a merge request
// into any branch), beyond the refs the rules decide.
func pushOptionsRefused(h *head) string {
	if len(h.pushOptions) > 0 {
		return "push options (-o) are not let through"
	}
	return ""
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// logged is the repository's URL as the log and the answer name it: no
// user information, query or fragment.
func logged(repo *url.URL) string {
	u := *repo
	u.User = nil
	u.RawQuery, u.ForceQuery = "", false
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// heldBody is a body whose pack the gate held on disk; closing it closes
// the file (already unlinked).
type heldBody struct {
	io.Reader
	pack io.Closer
}

func (b *heldBody) Close() error { return b.pack.Close() }
