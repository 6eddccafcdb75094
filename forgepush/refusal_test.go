package forgepush

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// forgeWithHead is a forge transport whose advertisement names head as
// the default branch.
func forgeWithHead(head string) http.RoundTripper {
	return answer(200, "application/x-git-upload-pack-advertisement",
		pkts("# service=git-upload-pack\n", "", oidA+" HEAD\x00symref=HEAD:"+head+"\n", ""))
}

type pushLog struct{ lines []string }

func (l *pushLog) RecordPush(repo, ref, reason string) {
	l.lines = append(l.lines, repo+" "+ref+": "+reason)
}

func check(t *testing.T, rules Rules, forge http.RoundTripper, body string) (io.Reader, *Refusal) {
	t.Helper()
	repo, _ := url.Parse("https://user:placeholder@forge.example/o/r.git?x=1")
	forward, refused, err := NewGate(rules).Check(context.Background(), forge, repo, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if (forward == nil) == (refused == nil) {
		t.Fatalf("Check = %v, %v: want one of a forward reader and a refusal", forward, refused)
	}
	return forward, refused
}

func respond(r *Refusal) *http.Response {
	rec := httptest.NewRecorder()
	r.WriteResponse(rec)
	return rec.Result()
}

// The answer is receive-pack's: "unpack ok", an "ng" line for every
// command (the refused ref's reason, the others refused with the push),
// a flush; in side-band 1 when the client asked for side-band-64k.
func TestWriteResponse(t *testing.T) {
	cmds := oidA + " " + oidB + " refs/heads/main\x00%s\n"
	second := zero + " " + oidB + " refs/heads/claude/x\n"
	report := pkts("unpack ok\n",
		"ng refs/heads/main claude-sandbox: the repository's default branch is not in push-ref\n",
		"ng refs/heads/claude/x claude-sandbox: "+atomic+"\n", "")
	for caps, want := range map[string]string{
		"report-status":                  report,
		"report-status-v2":               report,
		"report-status-v2 side-band-64k": pkts("\x01"+report, ""),
		"report-status side-band-64k":    pkts("\x01"+report, ""),
	} {
		_, r := check(t, Rules{}, forgeWithHead("refs/heads/main"), pkts(strings.Replace(cmds, "%s", caps, 1), second, "")+"PACK")
		resp := respond(r)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-git-receive-pack-result" || string(body) != want {
			t.Errorf("%s: answered %d %s %q, want %q", caps, resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
		}
	}
}

// A push refused as a whole, and a client that asked for no report: the
// answer names the reason; a head that could not be read is answered
// 403, never forwarded; each is recorded with the repository's URL
// without its user information or query.
func TestRefusedPushes(t *testing.T) {
	forge := forgeWithHead("refs/heads/main")
	for _, tc := range []struct {
		name, body, answer string
		status             int
		logged             []string
	}{
		{"push options", pkts(oidA+" "+oidB+" refs/heads/claude/x\x00report-status push-options\n", "", "merge_request.create\n", "") + "PACK",
			pkts("unpack ok\n", "ng refs/heads/claude/x claude-sandbox: push options (-o) are not let through\n", ""), 200,
			[]string{"https://forge.example/o/r.git refs/heads/claude/x: push options (-o) are not let through"}},
		{"no report asked for", pkts(oidA+" "+oidB+" refs/heads/main\n", ""),
			"claude-sandbox: push refused: the repository's default branch is not in push-ref\n", 403,
			[]string{"https://forge.example/o/r.git refs/heads/main: the repository's default branch is not in push-ref"}},
		{"malformed", pkts(oidA+" "+oidB+" refs/heads/claude/x\x00report-status\n", oidB+" "+oidA+" refs/heads/claude/x\n", ""),
			"claude-sandbox: push refused: the ref refs/heads/claude/x is named in two commands\n", 403,
			[]string{"https://forge.example/o/r.git : malformed push: the ref refs/heads/claude/x is named in two commands"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, r := check(t, Rules{}, forge, tc.body)
			resp := respond(r)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || string(body) != tc.answer {
				t.Errorf("answered %d %q, want %d %q", resp.StatusCode, body, tc.status, tc.answer)
			}
			var log pushLog
			r.Record(&log)
			if strings.Join(log.lines, "\n") != strings.Join(tc.logged, "\n") {
				t.Errorf("recorded %q, want %q", log.lines, tc.logged)
			}
		})
	}
}

// A forge that cannot say which branch is the default refuses every ref
// of the push under rules that name HEAD, with the forge's answer; under
// rules that do not, the forge is not asked.
func TestUnknownDefaultBranch(t *testing.T) {
	body := pkts(zero+" "+oidB+" refs/heads/claude/x\x00report-status\n", "") + "PACK"
	_, r := check(t, Rules{}, answer(500, "text/plain", "\x1b]0;x\x07"), body)
	resp := respond(r)
	got, _ := io.ReadAll(resp.Body)
	if want := pkts("unpack ok\n", "ng refs/heads/claude/x claude-sandbox: cannot learn the default branch: the forge answered 500 Internal Server Error\n", ""); string(got) != want {
		t.Errorf("answered %q, want %q", got, want)
	}
	asked := false
	forge := roundTrip(func(*http.Request) (*http.Response, error) { asked = true; return nil, io.EOF })
	forward, _ := check(t, Rules{Update: list(t, "refs/heads/claude/*")}, forge, body)
	if rest, _ := io.ReadAll(forward); string(rest) != body || asked {
		t.Errorf("forwarded %q (asked the forge: %v), want the body as it was, no question", rest, asked)
	}
}
