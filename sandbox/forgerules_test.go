package sandbox

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/forgeapi"
)

// The push keys become the gate's rules, each in its own list and order;
// a key without a line is the gate's default (nil).
func TestPushRules(t *testing.T) {
	c, err := ParseConf("c.conf", strings.NewReader("push-ref = refs/heads/claude/*\npush-ref = !refs/heads/claude/keep\npush-delete = refs/heads/claude/*\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.PushRules()
	if err != nil {
		t.Fatal(err)
	}
	if r.Update.String() != "refs/heads/claude/*, !refs/heads/claude/keep" || r.Delete.String() != "refs/heads/claude/*" || r.Force != nil {
		t.Errorf("PushRules = %v / %v / %v", r.Update, r.Delete, r.Force)
	}
	none, _ := (&Conf{}).PushRules()
	if none.Update != nil || none.Delete != nil || none.Force != nil {
		t.Errorf("PushRules without lines = %+v, want the defaults (nil)", none)
	}
	bad := &Conf{Source: "c.conf", PushForce: []Line{{"main", 3}}}
	if _, err := bad.PushRules(); err == nil || !strings.HasPrefix(err.Error(), "c.conf:3: ") {
		t.Errorf("PushRules of a bad line = %v, want an error naming c.conf:3", err)
	}
}

// The forge-api lines become the request gate's admin rules, over the
// policy's defaults; a bad line is an error naming its file and line.
func TestForgeAPIRules(t *testing.T) {
	c, err := ParseConf("c.conf", strings.NewReader("forge-api = POST /api/v3/repos/*/*/issues\nforge-api = !mutation addComment\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.ForgeAPIRules()
	if err != nil {
		t.Fatal(err)
	}
	var admin []string
	for _, rule := range r.Admin {
		admin = append(admin, rule.String())
	}
	if strings.Join(admin, "; ") != "POST /api/v3/repos/*/*/issues; !mutation addComment" || len(r.Defaults) != len(forgeAPIWrites) {
		t.Errorf("ForgeAPIRules = %q and %d defaults", admin, len(r.Defaults))
	}
	bad := &Conf{Source: "c.conf", ForgeAPI: []Line{{"GET /repos", 4}}}
	if _, err := bad.ForgeAPIRules(); err == nil || !strings.HasPrefix(err.Error(), "c.conf:4: forge-api: ") {
		t.Errorf("ForgeAPIRules of a bad line = %v, want an error naming c.conf:4", err)
	}
}

// TestForgeAPIDefaults: each of the policy's default writes is let through
// on the GitHub API, and none of the requests that move a ref, change a
// repository or grant access is: a default that would let one through
// fails here.
func TestForgeAPIDefaults(t *testing.T) {
	r, err := (&Conf{}).ForgeAPIRules()
	if err != nil {
		t.Fatal(err)
	}
	gate := forgeapi.NewGate(r)
	ask := func(method, path, body string) string {
		return gate.Check(true, httptest.NewRequest(method, "https://api.github.com"+path, strings.NewReader(body)))
	}
	for _, d := range forgeAPIWrites {
		method, route, _ := strings.Cut(d.rule, " ")
		if method == "mutation" {
			if why := ask("POST", "/graphql", `{"query":"mutation { `+route+`(input:{}) { clientMutationId } }"}`); why != "" {
				t.Errorf("the default %s is refused: %s", d.rule, why)
			}
			continue
		}
		if why := ask(method, strings.ReplaceAll(route, "*", "1"), "{}"); why != "" {
			t.Errorf("the default %s is refused: %s", d.rule, why)
		}
	}
	for _, req := range [][2]string{
		{"PATCH", "/repos/o/r/git/refs/heads/main"},
		{"POST", "/repos/o/r/git/refs"},
		{"DELETE", "/repos/o/r/git/refs/heads/main"},
		{"PUT", "/repos/o/r/contents/README.md"},
		{"DELETE", "/repos/o/r/contents/README.md"},
		{"POST", "/repos/o/r/merges"},
		{"PUT", "/repos/o/r/pulls/1/merge"},
		{"PUT", "/repos/o/r/pulls/1/update-branch"},
		{"POST", "/repos/o/r/merge-upstream"},
		{"PATCH", "/repos/o/r"},
		{"DELETE", "/repos/o/r"},
		{"POST", "/repos/o/r/branches/main/rename"},
		{"POST", "/repos/o/r/keys"},
		{"POST", "/repos/o/r/hooks"},
		{"PUT", "/repos/o/r/collaborators/someone"},
		{"POST", "/repos/o/r/actions/workflows/ci.yml/dispatches"},
		{"POST", "/repos/o/r/dispatches"},
		{"PUT", "/repos/o/r/actions/secrets/X"},
		{"POST", "/repos/o/r/pulls/1/reviews"},
		{"POST", "/repos/o/r/issues/1/labels"},
		{"PATCH", "/repos/o/r/issues/1"},
		{"PATCH", "/repos/o/r/pulls/1"},
		{"POST", "/repos/o/r/releases"},
		{"POST", "/user/keys"},
		{"POST", "/orgs/o/repos"},
	} {
		if ask(req[0], req[1], "{}") == "" {
			t.Errorf("%s %s is let through by the defaults", req[0], req[1])
		}
	}
	for _, m := range []string{"updateRef", "updateRefs", "createRef", "deleteRef", "createCommitOnBranch", "mergePullRequest", "mergeBranch",
		"enablePullRequestAutoMerge", "updateRepository", "updatePullRequestBranch", "addPullRequestReview", "submitPullRequestReview",
		"createDeployment", "updateIssue", "updatePullRequest", "addLabelsToLabelable", "deleteRepository"} {
		if ask("POST", "/graphql", `{"query":"mutation { `+m+`(input:{}) { clientMutationId } }"}`) == "" {
			t.Errorf("the mutation %s is let through by the defaults", m)
		}
	}
}
