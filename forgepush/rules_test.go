package forgepush

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func list(t *testing.T, patterns ...string) List {
	t.Helper()
	l, err := ParseList(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Each command is decided by the rules on its own: the default rules let
// every branch but the default be created, updated and force-pushed;
// push-ref, push-delete and push-force each decide their part, and a
// rule that names HEAD refuses when the forge named no default branch.
func TestRulesDecide(t *testing.T) {
	main := "refs/heads/main"
	update := func(ref string) Command { return Command{oidA, oidB, ref} }
	create := func(ref string) Command { return Command{zero, oidB, ref} }
	del := func(ref string) Command { return Command{oidA, zero, ref} }
	const ff = "fast-forward check"
	for _, tc := range []struct {
		name  string
		rules Rules
		cmd   Command
		head  string
		want  string // "" let through, ff: after a fast-forward check, else a part of why
	}{
		{"default: a branch", Rules{}, update("refs/heads/claude/x"), main, ""},
		{"default: a new branch", Rules{}, create("refs/heads/feature"), main, ""},
		{"default: the default branch", Rules{}, update(main), main, "the repository's default branch is not in push-ref"},
		{"default: the default branch made", Rules{}, create(main), main, "default branch is not in push-ref"},
		{"default: the default branch in another case", Rules{}, update("refs/heads/MAIN"), main, "the repository's default branch is not in push-ref"},
		{"default: force-push of the default branch in another case", Rules{Update: list(t, "refs/heads/*")}, update("refs/heads/Main"), main, ff},
		{"taken away in another case", Rules{Update: list(t, "refs/heads/*", "!refs/heads/release/*")}, update("refs/heads/Release/1"), main, "not in push-ref"},
		{"allowed only as written", Rules{Update: list(t, "refs/heads/claude/*")}, update("refs/heads/Claude/x"), main, "not in push-ref"},
		{"delete: the default branch in another case", Rules{Delete: list(t, "refs/heads/*", "!HEAD")}, del("refs/heads/mAin"), main, "deletion not in push-delete"},
		{"default: another default branch", Rules{}, update(main), "refs/heads/trunk", ""},
		{"default: a tag", Rules{}, create("refs/tags/v1"), main, "not in push-ref (refs/heads/*, !HEAD)"},
		{"default: another namespace", Rules{}, create("refs/for/main"), main, "not in push-ref"},
		{"default: a deletion", Rules{}, del("refs/heads/claude/x"), main, "deletion not in push-delete"},
		{"default: no default branch", Rules{}, update("refs/heads/claude/x"), "", "the forge names no default branch"},
		{"pattern: inside", Rules{Update: list(t, "refs/heads/claude/*")}, update("refs/heads/claude/a/b"), main, ""},
		{"pattern: outside", Rules{Update: list(t, "refs/heads/claude/*")}, update("refs/heads/claudex"), main, "not in push-ref (refs/heads/claude/*)"},
		{"pattern: no HEAD needed", Rules{Update: list(t, "refs/heads/claude/*"), Force: list(t, "refs/heads/claude/*")}, update("refs/heads/claude/a"), "", ""},
		{"pattern: taken away", Rules{Update: list(t, "refs/heads/*", "!refs/heads/release/*")}, update("refs/heads/release/1"), main, "not in push-ref"},
		{"pattern: only taken away", Rules{Update: list(t, "!HEAD")}, update("refs/heads/x"), main, "not in push-ref"},
		{"pattern: star inside", Rules{Update: list(t, "refs/heads/*/wip")}, update("refs/heads/a/b/wip"), main, ""},
		{"pattern: star inside, no match", Rules{Update: list(t, "refs/heads/*/wip")}, update("refs/heads/a/wipe"), main, "not in push-ref"},
		{"pattern: tags", Rules{Update: list(t, "refs/tags/v*")}, create("refs/tags/v1.2"), main, ""},
		{"pattern: the default branch allowed", Rules{Update: list(t, "refs/heads/*")}, update(main), main, ff},
		{"pattern: the default branch made", Rules{Update: list(t, "refs/heads/*")}, create(main), main, ""},
		{"force: none", Rules{Force: List{}}, update("refs/heads/claude/x"), main, ff},
		{"force: outside", Rules{Force: list(t, "refs/heads/claude/*")}, update("refs/heads/feature"), main, ff},
		{"force: no default branch", Rules{Update: list(t, "refs/heads/*")}, update("refs/heads/x"), "", ff},
		{"delete: allowed", Rules{Delete: list(t, "refs/heads/claude/*")}, del("refs/heads/claude/x"), main, ""},
		{"delete: outside", Rules{Delete: list(t, "refs/heads/claude/*")}, del("refs/heads/main"), main, "deletion not in push-delete"},
		{"delete: not the default", Rules{Delete: list(t, "refs/heads/*", "!HEAD")}, del(main), main, "deletion not in push-delete"},
		{"delete: no default branch", Rules{Delete: list(t, "refs/heads/*", "!HEAD")}, del("refs/heads/x"), "", "the forge names no default branch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.rules.decide(tc.cmd, tc.head)
			switch {
			case tc.want == ff && (!v.ancestry || v.why != ""):
				t.Errorf("decide = %+v, want a fast-forward check", v)
			case tc.want == "" && (v.ancestry || v.why != ""):
				t.Errorf("decide = %+v, want let through", v)
			case tc.want != "" && tc.want != ff && !strings.Contains(v.why, tc.want):
				t.Errorf("decide = %+v, want refused for %q", v, tc.want)
			}
		})
	}
}

// The conf's patterns: a ref name with stars, or HEAD, either led by "!";
// anything else is refused with why.
func TestParsePattern(t *testing.T) {
	for _, ok := range []string{"refs/heads/claude/*", "HEAD", "!HEAD", "!refs/heads/release/*", "refs/tags/v*", "refs/heads/*/wip", "refs/heads/main", "refs/*", "!refs/*"} {
		if p, err := ParsePattern(ok); err != nil || p.String() != ok {
			t.Errorf("ParsePattern(%q) = %v, %v", ok, p, err)
		}
	}
	for _, bad := range []string{"", "!", "main", "heads/main", "refs/heads", "refs/heads/", "refs/heads/a..b", "refs/heads/a b", "head", "!!HEAD", "refs/heads/[ab]", "refs/heads/ma\u0131n", "HEAD*", "refs/main", "refs*", "refs/heads/*.lock"} {
		if _, err := ParsePattern(bad); err == nil {
			t.Errorf("ParsePattern(%q) took it", bad)
		}
	}
}

// roundTrip is a transport that answers every request with one handler.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func answer(status int, contentType, body string) http.RoundTripper {
	return roundTrip(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", contentType)
		rec.WriteHeader(status)
		io.WriteString(rec, body)
		return rec.Result(), nil
	})
}

// The default branch is HEAD's symref in the forge's upload-pack
// advertisement; none for an empty repository; anything else is an error,
// which refuses the push.
func TestLearnDefaultBranch(t *testing.T) {
	const adv = "application/x-git-upload-pack-advertisement"
	service := pkts("# service=git-upload-pack\n", "")
	repo, _ := url.Parse("https://forge.example/o/r.git")
	for _, tc := range []struct {
		name      string
		forge     http.RoundTripper
		want, err string
	}{
		{"symref", answer(200, adv, service+pkts(oidA+" HEAD\x00multi_ack symref=HEAD:refs/heads/trunk agent=git/2\n", oidA+" refs/heads/trunk\n", "")), "refs/heads/trunk", ""},
		{"empty repository", answer(200, adv, service+pkts(zero+" capabilities^{}\x00multi_ack agent=git/2\n", "")), "", ""},
		{"no refs at all", answer(200, adv, service+"0000"), "", ""},
		{"not found", answer(404, "text/plain", "no"), "", "404"},
		{"a redirect", answer(302, "text/html", ""), "", "302"},
		{"not an advertisement", answer(200, "text/html", "<html>"), "", "not a ref advertisement"},
		{"no service line", answer(200, adv, pkts(oidA+" HEAD\x00symref=HEAD:refs/heads/main\n", "")), "", "service line"},
		{"HEAD outside heads", answer(200, adv, service+pkts(oidA+" HEAD\x00symref=HEAD:refs/tags/v1\n", "")), "", "names"},
		{"HEAD malformed", answer(200, adv, service+pkts(oidA+" HEAD\x00symref=HEAD:refs/heads/a..b\n", "")), "", "names"},
		{"cut short", answer(200, adv, service+"00ff"+oidA), "", "no first ref line"},
		{"transport error", roundTrip(func(*http.Request) (*http.Response, error) { return nil, errors.New("refused") }), "", "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := learnDefaultBranch(context.Background(), tc.forge, repo)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("learnDefaultBranch = %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("learnDefaultBranch = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// The gate asks the forge for HEAD's branch at the repository's own
// info/refs, upload-pack's, in protocol v0, the repository's path spelled
// as the push's: the default branch is the one of the repository the push
// goes to, however the forge reads an escape or a dot segment.
func TestLearnDefaultBranchAsks(t *testing.T) {
	var asked *http.Request
	forge := roundTrip(func(r *http.Request) (*http.Response, error) {
		asked = r
		return answer(404, "text/plain", "").RoundTrip(r)
	})
	for push, want := range map[string]string{
		"https://forge.example/o/r.git/":            "https://forge.example/o/r.git/info/refs?service=git-upload-pack",
		"https://forge.example/o%2Fother/r.git?x=1": "https://forge.example/o%2Fother/r.git/info/refs?service=git-upload-pack",
		"https://forge.example/o/x/../r.git#f":      "https://forge.example/o/x/../r.git/info/refs?service=git-upload-pack",
		"https://forge.example/o/r%2eg%69t":         "https://forge.example/o/r%2eg%69t/info/refs?service=git-upload-pack",
	} {
		repo, _ := url.Parse(push)
		asked = nil
		learnDefaultBranch(context.Background(), forge, repo)
		if asked == nil || asked.Method != http.MethodGet || asked.URL.String() != want || asked.Header.Get("Git-Protocol") != "" {
			t.Errorf("for a push to %s asked %v, want GET %s", push, asked, want)
		}
	}
}

// The gate's loopback listener relays only a smart-HTTP fetch of the
// repository under its secret prefix: no push, no other path, no other
// service; and what it relays goes to the repository's own URL.
func TestRelayServesOnlyAFetch(t *testing.T) {
	var asked []string
	forge := roundTrip(func(r *http.Request) (*http.Response, error) {
		asked = append(asked, r.Method+" "+r.URL.String())
		return answer(200, "application/x-git-upload-pack-advertisement", "0000").RoundTrip(r)
	})
	repo, _ := url.Parse("https://forge.example/o/r.git")
	srv := httptest.NewServer(relay(forge, repo, "/secret"))
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		ok           bool
	}{
		{"GET", "/secret/info/refs?service=git-upload-pack", true},
		{"POST", "/secret/git-upload-pack", true},
		{"GET", "/info/refs?service=git-upload-pack", false},
		{"GET", "/other/info/refs?service=git-upload-pack", false},
		{"GET", "/secret/info/refs?service=git-receive-pack", false},
		{"POST", "/secret/git-receive-pack", false},
		{"GET", "/secret/../other.git/info/refs?service=git-upload-pack", false},
		{"GET", "/secret/git-upload-pack", false},
		{"POST", "/secret/info/refs?service=git-upload-pack", false},
		{"GET", "/secret/HEAD", false},
	} {
		asked = nil
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(""))
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if (resp.StatusCode == 200) != tc.ok || (len(asked) == 1) != tc.ok {
			t.Errorf("%s %s: %d, the forge asked %q; want relayed %v", tc.method, tc.path, resp.StatusCode, asked, tc.ok)
		}
	}
	if want := "POST https://forge.example/o/r.git/git-upload-pack"; len(asked) != 0 {
		t.Errorf("asked %q after the last case", asked)
	} else {
		req, _ := http.NewRequest("POST", srv.URL+"/secret/git-upload-pack", strings.NewReader("0000"))
		resp, _ := http.DefaultTransport.RoundTrip(req)
		resp.Body.Close()
		if len(asked) != 1 || asked[0] != want {
			t.Errorf("relayed %q, want %s", asked, want)
		}
	}
}
