package forgepush

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// forge is a git server on the loopback: git's http-backend, pushes let
// through, and the body of each receive-pack request it got.
type forge struct {
	t    *testing.T
	root string
	srv  *httptest.Server
	mu   sync.Mutex
	got  [][]byte
}

func newForge(t *testing.T) *forge {
	t.Helper()
	exe, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skipf("no git: %v", err)
	}
	f := &forge{t: t, root: t.TempDir()}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(exe)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + f.root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"},
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			body, _ := io.ReadAll(r.Body)
			f.mu.Lock()
			f.got = append(f.got, body)
			f.mu.Unlock()
			// CGI takes no chunked body: git's large pushes are chunked.
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			r.TransferEncoding = nil
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	gitRun(t, f.root, "init", "--quiet", "--bare", "--initial-branch=main", "repo.git")
	gitRun(t, filepath.Join(f.root, "repo.git"), "config", "http.receivepack", "true")
	return f
}

func (f *forge) repo() *url.URL {
	u, _ := url.Parse(f.srv.URL + "/repo.git")
	return u
}

// ref is the forge's value of ref, "" for none.
func (f *forge) ref(ref string) string {
	out, err := exec.Command("git", "-C", filepath.Join(f.root, "repo.git"), "rev-parse", "--verify", "--quiet", ref).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// proxy stands for the egress proxy: receive-pack bodies go through the
// gate, everything else to the forge as it is. stripCaps takes
// side-band-64k and report-status-v2 out of the forge's receive-pack
// advertisement, so that git asks for report-status alone.
type proxy struct {
	gate      *Gate
	forge     *forge
	srv       *httptest.Server
	stripCaps bool
	mu        sync.Mutex
	sent      [][]byte // each receive-pack body git sent
	refusals  []*Refusal
}

func newProxy(t *testing.T, f *forge, rules Rules) *proxy {
	p := &proxy{gate: NewGate(rules), forge: f}
	target, _ := url.Parse(f.srv.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = p.modify
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			rp.ServeHTTP(w, r)
			return
		}
		var sent bytes.Buffer
		repo, _ := url.Parse(f.srv.URL + strings.TrimSuffix(r.URL.Path, "/git-receive-pack"))
		forward, refused, err := p.gate.Check(r.Context(), http.DefaultTransport, repo, io.TeeReader(r.Body, &sent))
		defer func() {
			io.Copy(io.Discard, r.Body)
			p.mu.Lock()
			p.sent = append(p.sent, sent.Bytes())
			p.mu.Unlock()
		}()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if refused != nil {
			p.mu.Lock()
			p.refusals = append(p.refusals, refused)
			p.mu.Unlock()
			refused.WriteResponse(w)
			return
		}
		r.Body = io.NopCloser(forward)
		if c, ok := forward.(io.Closer); ok {
			defer c.Close()
		}
		r.ContentLength = -1
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *proxy) modify(resp *http.Response) error {
	if !p.stripCaps || resp.Request.URL.RawQuery != "service=git-receive-pack" {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	hr := &headReader{body: bytes.NewReader(body)}
	hr.packet()
	hr.packet()
	first, err := hr.packet()
	if err != nil {
		return err
	}
	at := hr.raw.Len() - len(first) - 4
	stripped := string(first)
	for _, c := range []string{" side-band-64k", " report-status-v2"} {
		stripped = strings.Replace(stripped, c, "", 1)
	}
	body = append(append(append([]byte{}, body[:at]...), pktLine(stripped)...), body[hr.raw.Len():]...)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return nil
}

func (p *proxy) url() string { return p.srv.URL + "/repo.git" }

// gitEnv is an environment in which git reads no configuration but what
// the test gives it.
func gitEnv(home string) []string {
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, code := gitCode(t, dir, args...)
	if code != 0 {
		t.Fatalf("git %s: exit %d: %s", strings.Join(args, " "), code, out)
	}
	return strings.TrimSpace(out)
}

func gitCode(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// clone is a working repository with the forge as origin, through the
// proxy, with main pushed straight to the forge as its first commit.
func clone(t *testing.T, f *forge, p *proxy) string {
	t.Helper()
	dir := t.TempDir()
	gitRun(t, dir, "init", "--quiet", "--initial-branch=main")
	gitRun(t, dir, "commit", "--quiet", "--allow-empty", "-m", "first")
	gitRun(t, dir, "push", "--quiet", f.srv.URL+"/repo.git", "main")
	gitRun(t, dir, "remote", "add", "origin", p.url())
	f.got = nil
	return dir
}

func commit(t *testing.T, dir, file string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(file+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, dir, "add", file)
	gitRun(t, dir, "commit", "--quiet", "-m", file)
	return gitRun(t, dir, "rev-parse", "HEAD")
}

// forwardedUnchanged fails unless the forge got each body git sent, byte
// for byte.
func forwardedUnchanged(t *testing.T, f *forge, p *proxy) {
	t.Helper()
	if len(f.got) == 0 || len(f.got) != len(p.sent) {
		t.Fatalf("the forge got %d receive-pack bodies, git sent %d", len(f.got), len(p.sent))
	}
	for i := range f.got {
		if !bytes.Equal(f.got[i], p.sent[i]) {
			t.Errorf("body %d: the forge got %d bytes, git sent %d, not the same", i, len(f.got[i]), len(p.sent[i]))
		}
	}
}

// A push to a branch the default rules allow is let through, the body
// byte for byte, and the branch is on the forge.
func TestPushAllowedBranch(t *testing.T) {
	f := newForge(t)
	p := newProxy(t, f, Rules{})
	dir := clone(t, f, p)
	head := commit(t, dir, "a")
	gitRun(t, dir, "push", "--quiet", "origin", "HEAD:refs/heads/claude/a")
	if got := f.ref("refs/heads/claude/a"); got != head {
		t.Errorf("the forge's claude/a is %q, want %s", got, head)
	}
	forwardedUnchanged(t, f, p)
	// A force-push of a branch that is not the default one is let through
	// by the default rules, and so is its deletion once allowed.
	gitRun(t, dir, "reset", "--quiet", "--hard", "HEAD~")
	other := commit(t, dir, "b")
	gitRun(t, dir, "push", "--quiet", "--force", "origin", "HEAD:refs/heads/claude/a")
	if got := f.ref("refs/heads/claude/a"); got != other {
		t.Errorf("after the force-push the forge's claude/a is %q, want %s", got, other)
	}
	forwardedUnchanged(t, f, p)
}

// pushRefused runs git push and checks that git printed each ref as
// rejected with its reason and failed with its own exit code, 1.
func pushRefused(t *testing.T, dir string, args []string, want ...string) {
	t.Helper()
	out, code := gitCode(t, dir, append([]string{"push", "--porcelain"}, args...)...)
	if code != 1 {
		t.Errorf("git push %v: exit %d, want 1: %s", args, code, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("git push %v printed\n%s\nwithout %q", args, out, w)
		}
	}
}

// A push to the default branch is refused, with every ref of the push
// (atomic); git prints the reason for each and fails; the forge is
// unchanged. The same with a client that asks for report-status alone,
// without side-band-64k.
func TestPushDefaultBranchRefused(t *testing.T) {
	for _, strip := range []bool{false, true} {
		f := newForge(t)
		p := newProxy(t, f, Rules{})
		p.stripCaps = strip
		dir := clone(t, f, p)
		first := f.ref("refs/heads/main")
		commit(t, dir, "a")
		pushRefused(t, dir, []string{"origin", "main", "HEAD:refs/heads/claude/b"},
			"!\trefs/heads/main:refs/heads/main\t[remote rejected] (claude-sandbox: the repository's default branch is not in push-ref)",
			"!\tHEAD:refs/heads/claude/b\t[remote rejected] (claude-sandbox: "+atomic+")")
		if got := f.ref("refs/heads/main"); got != first {
			t.Errorf("stripCaps %v: the forge's main moved to %s", strip, got)
		}
		if got := f.ref("refs/heads/claude/b"); got != "" {
			t.Errorf("stripCaps %v: the forge has claude/b, refused with the rest of the push", strip)
		}
		if len(f.got) != 0 {
			t.Errorf("stripCaps %v: the forge got %d receive-pack bodies, want none", strip, len(f.got))
		}
		if len(p.refusals) != 1 || len(p.refusals[0].Refused()) != 1 || p.refusals[0].Refused()[0].Ref != "refs/heads/main" {
			t.Errorf("stripCaps %v: refusals recorded %+v, want main alone", strip, p.refusals)
		} else if h := p.refusals[0].head; h.sideBand == strip || h.reportStatusV2 == strip || h.reportStatus != strip {
			t.Errorf("stripCaps %v: git asked for side-band-64k %v, report-status-v2 %v, report-status %v", strip, h.sideBand, h.reportStatusV2, h.reportStatus)
		}
	}
}

// With push-ref refs/heads/claude/* a branch outside it is refused, and a
// deletion is refused until push-delete names the branch.
func TestPushRefPatternsAndDeletion(t *testing.T) {
	f := newForge(t)
	claude := List{{glob: "refs/heads/claude/*"}}
	p := newProxy(t, f, Rules{Update: claude})
	dir := clone(t, f, p)
	commit(t, dir, "a")
	pushRefused(t, dir, []string{"origin", "HEAD:refs/heads/feature"},
		"[remote rejected] (claude-sandbox: not in push-ref (refs/heads/claude/*))")
	gitRun(t, dir, "push", "--quiet", "origin", "HEAD:refs/heads/claude/x")
	pushRefused(t, dir, []string{"origin", ":refs/heads/claude/x"},
		"[remote rejected] (claude-sandbox: deletion not in push-delete)")
	if f.ref("refs/heads/claude/x") == "" {
		t.Fatal("the refused deletion deleted claude/x")
	}
	p.gate = NewGate(Rules{Update: claude, Delete: claude})
	gitRun(t, dir, "push", "--quiet", "origin", ":refs/heads/claude/x")
	if f.ref("refs/heads/claude/x") != "" {
		t.Error("the allowed deletion left claude/x")
	}
}

// With the default branch allowed but no force-push of it, a fast-forward
// of main is let through (the pack held and forwarded byte for byte), and
// a force-push is refused as not a fast-forward.
func TestPushFastForwardChecked(t *testing.T) {
	f := newForge(t)
	p := newProxy(t, f, Rules{Update: List{{glob: "refs/heads/*"}}})
	dir := clone(t, f, p)
	gitRun(t, dir, "push", "--quiet", "origin", "HEAD:refs/heads/claude/side")
	ff := commit(t, dir, "a")
	gitRun(t, dir, "push", "--quiet", "origin", "main")
	if got := f.ref("refs/heads/main"); got != ff {
		t.Fatalf("the fast-forward left the forge's main at %q, want %s", got, ff)
	}
	forwardedUnchanged(t, f, p)
	// A merge of a branch the forge has, whose commits the pack does not
	// carry, is a fast-forward too.
	gitRun(t, dir, "checkout", "--quiet", "-b", "side", "HEAD~")
	commit(t, dir, "side")
	gitRun(t, dir, "push", "--quiet", "origin", "HEAD:refs/heads/claude/side")
	gitRun(t, dir, "checkout", "--quiet", "main")
	gitRun(t, dir, "merge", "--quiet", "--no-edit", "side")
	merged := gitRun(t, dir, "rev-parse", "HEAD")
	gitRun(t, dir, "push", "--quiet", "origin", "main")
	if got := f.ref("refs/heads/main"); got != merged {
		t.Fatalf("the merge left the forge's main at %q, want %s", got, merged)
	}
	gitRun(t, dir, "reset", "--quiet", "--hard", "HEAD~")
	commit(t, dir, "rewritten")
	pushRefused(t, dir, []string{"--force", "origin", "main"},
		"[remote rejected] (claude-sandbox: not a fast-forward, and not in push-force)")
	if got := f.ref("refs/heads/main"); got != merged {
		t.Errorf("the refused force-push moved the forge's main to %s", got)
	}
}

// A push larger than git's http.postBuffer starts with a probe, a body of
// one flush packet, which is let through as it is; then the push.
func TestPushProbe(t *testing.T) {
	f := newForge(t)
	p := newProxy(t, f, Rules{})
	dir := clone(t, f, p)
	big := make([]byte, 256<<10)
	for i := range big {
		big[i] = byte(i * 7919 >> 3)
	}
	os.WriteFile(filepath.Join(dir, "big"), big, 0o644)
	gitRun(t, dir, "add", "big")
	gitRun(t, dir, "commit", "--quiet", "-m", "big")
	gitRun(t, dir, "-c", "http.postBuffer=1024", "push", "--quiet", "origin", "HEAD:refs/heads/claude/big")
	if f.ref("refs/heads/claude/big") == "" {
		t.Fatal("the large push did not reach the forge")
	}
	if len(p.sent) != 2 || string(p.sent[0]) != "0000" {
		t.Errorf("git sent %d bodies, the first %q; want the probe 0000 and the push", len(p.sent), firstBytes(p.sent))
	}
	forwardedUnchanged(t, f, p)
}

func firstBytes(b [][]byte) string {
	if len(b) == 0 {
		return ""
	}
	return string(b[0][:min(len(b[0]), 16)])
}

// post sends a receive-pack body of the test's own making through the
// proxy and returns the answer.
func post(t *testing.T, p *proxy, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(p.url()+"/git-receive-pack", "application/x-git-receive-pack-request", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// A hostile pack for a branch whose fast-forward is checked: a commit on
// top of main (a fast-forward by its parent) whose tree holds a ".git"
// entry, which git outside would write into a checkout. index-pack
// --strict refuses it, so the gate does, and the forge gets nothing; a
// pack of garbage and a pack cut short are refused the same way.
func TestPushHostilePack(t *testing.T) {
	f := newForge(t)
	p := newProxy(t, f, Rules{Update: List{{glob: "refs/heads/*"}}})
	dir := clone(t, f, p)
	old := f.ref("refs/heads/main")
	blob := strings.TrimSpace(gitPipe(t, dir, "hooks\n", "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(gitPipe(t, dir, "100644 blob "+blob+"\t.git\n", "mktree"))
	bad := gitRun(t, dir, "commit-tree", tree, "-p", old, "-m", "hostile")
	pack := gitPipe(t, dir, bad+"\n^"+old+"\n", "pack-objects", "--revs", "--stdout", "--thin")
	cmd := pktLine(old+" "+bad+" refs/heads/main\x00report-status side-band-64k\n") + "0000"
	for name, body := range map[string]string{
		"dot-git tree": cmd + pack,
		"garbage":      cmd + "PACK\x00\x00\x00\x02\x00\x00\x00\x01garbage",
		"cut short":    cmd + pack[:len(pack)/2],
	} {
		code, out := post(t, p, []byte(body))
		if code != http.StatusOK || !strings.Contains(out, "ng refs/heads/main claude-sandbox: cannot tell whether it is a fast-forward: git index-pack --strict refused the pack") {
			t.Errorf("%s: answered %d %q, want main refused by index-pack", name, code, out)
		}
	}
	// A good pack naming an object it does not carry, and the forge lacks,
	// as NEW: merge-base cannot walk from it, which refuses.
	good := gitRun(t, dir, "commit-tree", gitRun(t, dir, "rev-parse", old+"^{tree}"), "-p", old, "-m", "good")
	goodPack := gitPipe(t, dir, good+"\n^"+old+"\n", "pack-objects", "--revs", "--stdout", "--thin")
	absent := strings.Repeat("3", 40)
	code, out := post(t, p, []byte(pktLine(old+" "+absent+" refs/heads/main\x00report-status\n")+"0000"+goodPack))
	if code != http.StatusOK || !strings.Contains(out, "ng refs/heads/main claude-sandbox: cannot tell whether it is a fast-forward, and not in push-force") {
		t.Errorf("NEW absent: answered %d %q, want main refused as undecided", code, out)
	}
	if got := f.ref("refs/heads/main"); got != old || len(f.got) != 0 {
		t.Errorf("the forge's main is %s (want %s), and it got %d bodies", got, old, len(f.got))
	}
	// The control: without --strict git takes the same pack.
	bare := filepath.Join(t.TempDir(), "control.git")
	gitRun(t, dir, "init", "--quiet", "--bare", bare)
	gitRun(t, dir, "push", "--quiet", bare, old+":refs/heads/main")
	if out, code := gitPipeCode(t, bare, pack, "index-pack", "--stdin", "--fix-thin"); code != 0 {
		t.Errorf("the control: index-pack without --strict refused the pack: %s", out)
	}
}

func gitPipe(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	out, code := gitPipeCode(t, dir, stdin, args...)
	if code != 0 {
		t.Fatalf("git %v: exit %d: %s", args, code, out)
	}
	return out
}

func gitPipeCode(t *testing.T, dir, stdin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

// A pack past maxPack, for an update whose fast-forward must be checked,
// is refused with the reason, not held and not forwarded.
func TestPushPackTooLarge(t *testing.T) {
	f := newForge(t)
	p := newProxy(t, f, Rules{Update: List{{glob: "refs/heads/*"}}})
	dir := clone(t, f, p)
	commit(t, dir, "a")
	old := maxPack
	maxPack = 64
	t.Cleanup(func() { maxPack = old })
	pushRefused(t, dir, []string{"origin", "main"}, "[remote rejected] (claude-sandbox: the pack is larger than the gate holds to check a fast-forward)")
	if len(f.got) != 0 {
		t.Errorf("the forge got %d bodies", len(f.got))
	}
}
