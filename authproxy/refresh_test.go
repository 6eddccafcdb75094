package authproxy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// expiringLogin is a file login whose access token expires in d.
func expiringLogin(d time.Duration) string {
	return fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"old-access","refreshToken":"old-refresh","expiresAt":%d,"scopes":["user:inference","user:profile"],"subscriptionType":"max","rateLimitTier":"default_claude_max_5x"},"mcpOAuth":{"srv":{"accessToken":"mcp-token"}}}`,
		time.Now().Add(d).UnixMilli())
}

// tokenEndpoint answers refreshes with status and body, and counts them.
func tokenEndpoint(t *testing.T, status int, body string) (*httptest.Server, *atomic.Int32) {
	var posts atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		var req map[string]string
		if r.Method != "POST" || r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&req) != nil {
			t.Errorf("the token endpoint got %s %s", r.Method, r.Header.Get("Content-Type"))
		}
		want := map[string]string{"grant_type": "refresh_token", "refresh_token": "old-refresh", "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e"}
		if fmt.Sprint(req) != fmt.Sprint(want) {
			t.Errorf("the token endpoint got %v, want %v", req, want)
		}
		time.Sleep(50 * time.Millisecond) // lets concurrent requests pile up behind the refresh
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s, &posts
}

func TestRefreshExpiringLogin(t *testing.T) {
	home := writeLogin(t, expiringLogin(time.Minute))
	path := filepath.Join(home, layout.KeptLogin)
	tokens, posts := tokenEndpoint(t, http.StatusOK, `{"token_type":"Bearer","access_token":"new-access","refresh_token":"new-refresh","expires_in":28800,"scope":"user:inference user:profile"}`)
	up := newUpstream(t, nil)
	base, srv := startProxy(t, mustFind(t, nil, home), up.URL, tokens.URL)

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if resp, body := send(t, "POST", base+"/v1/messages", bearer(placeholder), strings.NewReader("{}")); resp.StatusCode != http.StatusOK {
				t.Errorf("got %s %s", resp.Status, body)
			}
		})
	}
	wg.Wait()
	if n := posts.Load(); n != 1 {
		t.Errorf("the token endpoint got %d refreshes, want 1", n)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	for _, r := range up.seen {
		if got := r.Header.Get("Authorization"); got != "Bearer new-access" {
			t.Errorf("the upstream got %q, want the new token", got)
		}
	}
	if err := srv.LastError(); err != nil {
		t.Errorf("LastError() = %v", err)
	}

	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if after.Mode() != 0o600 {
		t.Errorf("the kept login's mode is %v, want 0600", after.Mode())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ClaudeAiOauth struct {
			AccessToken, RefreshToken, SubscriptionType, RateLimitTier string
			ExpiresAt                                                  int64
			Scopes                                                     []string
		}
		McpOAuth map[string]map[string]string
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the rewritten file is not JSON: %v\n%s", err, data)
	}
	o := doc.ClaudeAiOauth
	if o.AccessToken != "new-access" || o.RefreshToken != "new-refresh" {
		t.Errorf("the file holds %q and %q, not the new tokens", o.AccessToken, o.RefreshToken)
	}
	if exp := time.UnixMilli(o.ExpiresAt); time.Until(exp) < 7*time.Hour || time.Until(exp) > 8*time.Hour {
		t.Errorf("the file's expiresAt is %v, want in 8 hours", exp)
	}
	if o.SubscriptionType != "max" || o.RateLimitTier != "default_claude_max_5x" || strings.Join(o.Scopes, " ") != "user:inference user:profile" ||
		doc.McpOAuth["srv"]["accessToken"] != "mcp-token" {
		t.Errorf("the rewrite lost fields Claude Code wrote: %s", data)
	}
}

func TestRefreshFailureForwardsOldToken(t *testing.T) {
	content := expiringLogin(-time.Hour)
	home := writeLogin(t, content)
	tokens, posts := tokenEndpoint(t, http.StatusBadRequest, `{"error":"invalid_grant","error_description":"old-refresh is revoked"}`)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	})
	base, srv := startProxy(t, mustFind(t, nil, home), up.URL, tokens.URL)
	for range 2 {
		if resp, _ := send(t, "POST", base+"/v1/messages", bearer(placeholder), strings.NewReader("{}")); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the client got %s, not the upstream's 401", resp.Status)
		}
		if got := up.last(t).Header.Get("Authorization"); got != "Bearer old-access" {
			t.Errorf("the upstream got %q, want the old token", got)
		}
	}
	if n := posts.Load(); n != 1 {
		t.Errorf("the token endpoint got %d refreshes, want 1: a failure waits before the next try", n)
	}
	err := srv.LastError()
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("LastError() = %v; want the endpoint's refusal", err)
	}
	if strings.Contains(err.Error(), "old-") {
		t.Errorf("LastError() shows a token: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(home, layout.KeptLogin)); string(data) != content {
		t.Errorf("a failed refresh changed the kept login to %s", data)
	}
}

func TestRefreshTakesOtherProcessLogin(t *testing.T) {
	home := writeLogin(t, expiringLogin(-time.Hour))
	c := mustFind(t, nil, home)
	// Another launcher or Claude Code itself refreshed after Find.
	other := fmt.Sprintf(`{"claudeAiOauth":{"accessToken":"other-access","refreshToken":"other-refresh","expiresAt":%d}}`, time.Now().Add(8*time.Hour).UnixMilli())
	if err := os.WriteFile(filepath.Join(home, ".claude/.credentials.json"), []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, posts := tokenEndpoint(t, http.StatusOK, `{"access_token":"new-access","expires_in":28800}`)
	up := newUpstream(t, nil)
	base, srv := startProxy(t, c, up.URL, tokens.URL)
	send(t, "POST", base+"/v1/messages", bearer(placeholder), strings.NewReader("{}"))
	if n := posts.Load(); n != 0 {
		t.Errorf("the token endpoint got %d refreshes, want none", n)
	}
	if got := up.last(t).Header.Get("Authorization"); got != "Bearer other-access" {
		t.Errorf("the upstream got %q, want the other process's token", got)
	}
	if err := srv.LastError(); err != nil {
		t.Errorf("LastError() = %v", err)
	}
}

func TestNoRefreshAfterLogout(t *testing.T) {
	home := writeLogin(t, expiringLogin(-time.Hour))
	c := mustFind(t, nil, home)
	if err := os.WriteFile(filepath.Join(home, ".claude/.credentials.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, posts := tokenEndpoint(t, http.StatusOK, `{"access_token":"new-access","expires_in":28800}`)
	up := newUpstream(t, nil)
	base, srv := startProxy(t, c, up.URL, tokens.URL)
	send(t, "POST", base+"/v1/messages", bearer(placeholder), strings.NewReader("{}"))
	if n := posts.Load(); n != 0 {
		t.Errorf("the token endpoint got %d refreshes after a logout", n)
	}
	if err := srv.LastError(); err == nil || !strings.Contains(err.Error(), "log in again") {
		t.Errorf("LastError() = %v; want the login gone", err)
	}
}

func TestNoRefreshWhileValid(t *testing.T) {
	for name, tc := range map[string]struct {
		environ []string
		file    time.Duration // until the file's token expires
	}{
		"valid file login": {nil, time.Hour},
		"variable's token": {[]string{"CLAUDE_CODE_OAUTH_TOKEN=env-access"}, -time.Hour},
	} {
		home := writeLogin(t, expiringLogin(tc.file))
		tokens, posts := tokenEndpoint(t, http.StatusOK, `{"access_token":"new-access","expires_in":28800}`)
		up := newUpstream(t, nil)
		base, _ := startProxy(t, mustFind(t, tc.environ, home), up.URL, tokens.URL)
		send(t, "POST", base+"/v1/messages", bearer(placeholder), strings.NewReader("{}"))
		if n := posts.Load(); n != 0 {
			t.Errorf("%s: the token endpoint got %d refreshes for a valid token", name, n)
		}
		if got := up.last(t).Header.Get("Authorization"); got == "Bearer new-access" {
			t.Errorf("%s: the upstream got a refreshed token", name)
		}
	}
}

// TestRefreshNeverReachesAnotherName: a refresh saves the new login to a
// new file renamed over the kept one, so a name the file had before (a hard
// link a session made) gets nothing of it, and the kept file it replaces is
// emptied first: the link shows neither the old login nor the new one.
// Red with the refresh written in place, or without the emptying.
func TestRefreshNeverReachesAnotherName(t *testing.T) {
	home := writeLogin(t, expiringLogin(-time.Hour))
	second := filepath.Join(home, ".claude/second-name")
	if err := os.Link(filepath.Join(home, layout.CredentialsFile), second); err != nil {
		t.Fatal(err)
	}
	c := mustFind(t, nil, home)
	if err := c.Keep(); err != nil {
		t.Fatal(err)
	}
	// A name for the kept file itself, as a sandbox that saw its directory
	// could have made.
	keptSecond := filepath.Join(home, ".claude/kept-second-name")
	if err := os.Link(filepath.Join(home, layout.KeptLogin), keptSecond); err != nil {
		t.Fatal(err)
	}
	tokens, posts := tokenEndpoint(t, http.StatusOK, `{"access_token":"new-access","refresh_token":"new-refresh","expires_in":28800}`)
	up := newUpstream(t, nil)
	base, srv := startProxy(t, c, up.URL, tokens.URL)
	send(t, "POST", base+"/v1/messages", bearer(placeholder), strings.NewReader("{}"))
	if n := posts.Load(); n != 1 || srv.LastError() != nil {
		t.Fatalf("%d refreshes, LastError() = %v; want one that succeeds", n, srv.LastError())
	}
	for _, name := range []string{second, keptSecond, filepath.Join(home, layout.CredentialsFile)} {
		if data, err := os.ReadFile(name); err != nil || len(data) != 0 {
			t.Errorf("%s holds %q (%v); want it empty", name, data, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(home, layout.KeptLogin))
	if err != nil || !strings.Contains(string(data), `"new-access"`) || !strings.Contains(string(data), "mcp-token") {
		t.Errorf("the kept login is %q (%v); want the refreshed login and every other field", data, err)
	}
}
