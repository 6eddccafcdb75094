package forgepush

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// maxPack bounds the pack the gate holds on disk to check a fast-forward:
// GitHub's own limit on a push.
var maxPack int64 = 2 << 30

// gitOptions are the configuration of every git the gate runs, on top of
// none from the system or the user (GIT_CONFIG_NOSYSTEM,
// GIT_CONFIG_GLOBAL=/dev/null) and the repository's own, which git init
// wrote with no template: no hooks, no protocol but http to the gate's own
// listener, no redirect, no credential helper, no automatic maintenance.
var gitOptions = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "protocol.allow=never",
	"-c", "protocol.http.allow=always",
	"-c", "http.followRedirects=false",
	"-c", "credential.helper=",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "fetch.recurseSubmodules=false",
	"-c", "transfer.fsckObjects=true",
}

// fastForwards reads the pack (the rest of body) into a file, bounded by
// maxPack, and says of each update in checks whether NEW descends from
// OLD, in a repository of its own in a private temporary directory: it
// fetches the forge's branches and tags through forge, indexes the pack as
// a forge's receive-pack does with an untrusted push (index-pack --stdin
// --fix-thin --strict), and asks merge-base --is-ancestor. notFF names
// each ref that is not shown to be a fast-forward, with why; pack is the
// held pack, at its start, for the forward reader.
func fastForwards(ctx context.Context, forge http.RoundTripper, repo *url.URL, body io.Reader, checks []Command) (pack *os.File, notFF map[string]string, err error) {
	dir, err := os.MkdirTemp("", "claude-sandbox-push-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	pack, err = holdPack(dir, body)
	if err != nil {
		return nil, nil, err
	}
	notFF, err = ancestry(ctx, forge, repo, dir, pack, checks)
	if err == nil {
		_, err = pack.Seek(0, io.SeekStart)
	}
	if err != nil {
		pack.Close()
		return nil, nil, err
	}
	return pack, notFF, nil
}

// errPackTooLarge is a pack past maxPack, which the gate does not hold.
var errPackTooLarge = errors.New("the pack is larger than the gate holds to check a fast-forward")

// holdPack copies the rest of the body to an unlinked file in dir.
func holdPack(dir string, body io.Reader) (*os.File, error) {
	f, err := os.CreateTemp(dir, "pack-")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	n, err := io.Copy(f, io.LimitReader(body, maxPack+1))
	if err == nil && n > maxPack {
		err = errPackTooLarge
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ancestry runs the check in dir; a git that fails refuses the ref, never
// lets it through.
func ancestry(ctx context.Context, forge http.RoundTripper, repo *url.URL, dir string, pack io.Reader, checks []Command) (map[string]string, error) {
	bare := filepath.Join(dir, "repo.git")
	if out, err := git(ctx, dir, nil, "init", "--quiet", "--bare", "--template=", bare); err != nil {
		return nil, fmt.Errorf("git init: %v: %s", err, out)
	}
	notFF := map[string]string{}
	refuseAll := func(why string) map[string]string {
		for _, c := range checks {
			notFF[c.Ref] = why
		}
		return notFF
	}
	remote, stop, err := serveForge(forge, repo)
	if err != nil {
		return nil, err
	}
	_, err = git(ctx, bare, nil, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote,
		"+refs/heads/*:refs/forge/heads/*", "+refs/tags/*:refs/forge/tags/*")
	stop()
	if err != nil {
		return refuseAll("cannot tell whether it is a fast-forward: fetching from the forge failed"), nil
	}
	if _, err := git(ctx, bare, pack, "index-pack", "--stdin", "--fix-thin", "--strict"); err != nil {
		return refuseAll("cannot tell whether it is a fast-forward: git index-pack --strict refused the pack"), nil
	}
	for _, c := range checks {
		_, err := git(ctx, bare, nil, "merge-base", "--is-ancestor", c.Old, c.New)
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit) && exit.ExitCode() == 1:
			notFF[c.Ref] = "not a fast-forward, and not in push-force"
		default:
			notFF[c.Ref] = "cannot tell whether it is a fast-forward, and not in push-force"
		}
	}
	return notFF, nil
}

// git runs git in dir with no configuration but gitOptions and an
// environment of its own, and returns what it printed.
func git(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, gitOptions...), args...)...)
	// When the push ends, git and the programs it started (a fetch's
	// remote helper) die with it, and none holds its output open.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	cmd.Dir = dir
	cmd.Stdin = stdin
	cmd.Env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + dir,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=/bin/false",
		"LC_ALL=C",
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.Bytes(), err
}

// serveForge serves the repository's upload-pack through forge to git on a
// loopback listener of its own, under a path no other process can guess,
// for as long as the fetch runs: only the two requests of a smart HTTP
// fetch, relayed without following a redirect.
func serveForge(forge http.RoundTripper, repo *url.URL) (remote string, stop func(), err error) {
	secret := make([]byte, 16)
	rand.Read(secret)
	prefix := "/" + hex.EncodeToString(secret)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: relay(forge, repo, prefix)}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + prefix, func() { srv.Close() }, nil
}

// relay forwards GET info/refs?service=git-upload-pack and POST
// git-upload-pack under prefix to the repository, and refuses the rest.
func relay(forge http.RoundTripper, repo *url.URL, prefix string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		tail, ok := strings.CutPrefix(req.URL.Path, prefix)
		get := req.Method == http.MethodGet && tail == "/info/refs" && req.URL.RawQuery == "service=git-upload-pack"
		post := req.Method == http.MethodPost && tail == "/git-upload-pack"
		if !ok || !(get || post) {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		u := under(repo, tail)
		u.RawQuery = req.URL.RawQuery
		out, err := http.NewRequestWithContext(req.Context(), req.Method, u.String(), req.Body)
		if err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		for _, h := range []string{"Accept", "Content-Type", "Content-Encoding", "Git-Protocol", "User-Agent"} {
			if v := req.Header.Get(h); v != "" {
				out.Header.Set(h, v)
			}
		}
		out.ContentLength = req.ContentLength
		resp, err := forge.RoundTrip(out)
		if err != nil {
			http.Error(w, "the forge did not answer", http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			http.Error(w, "the forge answered "+resp.Status, http.StatusBadGateway)
			return
		}
		for _, h := range []string{"Content-Type", "Content-Encoding", "Cache-Control"} {
			if v := resp.Header.Get(h); v != "" {
				w.Header().Set(h, v)
			}
		}
		io.Copy(w, resp.Body)
	})
}
