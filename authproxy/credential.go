// Package authproxy keeps Claude Code's login outside the sandbox. The
// launcher finds the login with Find and serves a loopback API endpoint with
// Server: requests that carry the session's placeholder go on to the real API
// with the real credential in its place, and the answers stream back.
package authproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/plainfile"
)

// Kind is how a credential is presented to the API.
type Kind int

const (
	APIKey Kind = iota // x-api-key
	Bearer             // Authorization: Bearer, e.g. an LLM gateway's token
	OAuth              // Authorization: Bearer and the OAuth beta: a Claude subscription login
)

func (k Kind) String() string {
	switch k {
	case APIKey:
		return "API key"
	case Bearer:
		return "auth token"
	case OAuth:
		return "OAuth token"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Claude Code's OAuth refresh endpoint and public client id, as its bundled
// CLI has them since 2.1.81. The older https://console.anthropic.com/v1/oauth/token
// answers 404 since June 2026.
const (
	TokenURL = "https://platform.claude.com/v1/oauth/token"
	clientID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
)

const (
	refreshBefore  = 5 * time.Minute  // renew a token this close to its expiry, as Claude Code does
	retryRefresh   = time.Minute      // after a failure, so a dead endpoint does not delay every request
	refreshTimeout = 30 * time.Second // requests wait for the refresh, so it must end
)

// envSources are the variables that carry a credential, in Claude Code's own
// order of precedence; its credentials file comes after them.
var envSources = []struct {
	name string
	kind Kind
}{
	{"ANTHROPIC_AUTH_TOKEN", Bearer},
	{"ANTHROPIC_API_KEY", APIKey},
	{"CLAUDE_CODE_OAUTH_TOKEN", OAuth},
}

// Credential is the login the launcher keeps outside the sandbox. Printing it
// in any form shows only its Kind and Source.
type Credential struct {
	Kind   Kind
	Source string // the variable's name or the credentials file's path
	// st is reached through a function: fmt, even inside other values and
	// with any verb, shows a function as an address, never what it returns.
	st func() *state
}

// state is the secret part, shared by copies of a Credential.
type state struct {
	mu      sync.Mutex // held across a refresh: one at a time per process
	secret  string
	refresh string    // "" unless the login came from the credentials file
	expires time.Time // zero when unknown: never refreshed
	home    string    // the home whose login this is; "" unless it came from a file
	retryAt time.Time
	err     error // the last refresh's failure
}

func newCredential(kind Kind, source string, st *state) *Credential {
	return &Credential{Kind: kind, Source: source, st: func() *state { return st }}
}

func (c Credential) String() string { return fmt.Sprintf("%v from %s", c.Kind, c.Source) }

// maxLoginFile bounds the credentials file the launcher reads: Claude Code
// writes a few kilobytes (its login and MCP servers' logins); the sandbox
// can leave anything at the path of a login that does not exist yet.
const maxLoginFile = 1 << 20

// loginLimits are what a credentials file may be: a regular file of the
// user's (or of the owner of ~/.claude, a mount of the host's in a
// container run as root), of at most maxLoginFile bytes.
var loginLimits = plainfile.Limits{Max: maxLoginFile, Owner: os.Getuid(), DirOwner: true}

// Find returns the credential Claude Code would use, nil when there is none.
// Empty variables count as unset. A file login is the one at Claude Code's
// path when it holds one (a login made since the last launch, which Keep
// then moves), else the one the launcher keeps (ADR 0039). A credentials
// file, whose path a session could write until a login exists, is read
// only as a regular file of the user's (or of the owner of ~/.claude, a
// mount of the host's in a container run as root), of at most
// maxLoginFile bytes, opened without blocking: anything else is an error
// naming the file, never a hang.
func Find(env launchenv.Env, home string) (*Credential, error) {
	for _, src := range envSources {
		if v := env.Get(src.name); v != "" {
			return newCredential(src.kind, src.name, &state{secret: v}), nil
		}
	}
	path := filepath.Join(home, layout.CredentialsFile)
	cf, err := loginAt(path)
	if err == nil && cf == nil {
		path = filepath.Join(home, layout.KeptLogin)
		cf, err = loginAt(path)
	}
	if err != nil || cf == nil {
		return nil, err
	}
	st := &state{secret: cf.login.AccessToken, refresh: cf.login.RefreshToken, home: home}
	if cf.login.ExpiresAt != 0 {
		st.expires = time.UnixMilli(cf.login.ExpiresAt)
	}
	return newCredential(OAuth, path, st), nil
}

// loginAt reads the login in the credentials file at path: nil when the
// file is missing, empty (the launcher emptied it when it kept its login)
// or holds no login.
func loginAt(path string) (*credFile, error) {
	data, err := plainfile.Read(path, loginLimits)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case plainfile.IsLink(err):
		return nil, fmt.Errorf("%s is a symbolic link; the sandbox hides the login, which it cannot do through a link; replace the link with a copy of its target", path)
	case err != nil:
		return nil, fmt.Errorf("cannot read Claude's login: %w", err)
	}
	return loginIn(path, data)
}

// loginIn reads the login in data, a credentials file's content: nil when
// the file is empty (the launcher emptied it when it kept its login) or
// holds no login.
func loginIn(path string, data []byte) (*credFile, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	cf, err := parseFile(path, data)
	if err != nil || !cf.loggedIn() {
		return nil, err
	}
	return cf, nil
}

// credFile is the credentials file's JSON, kept whole so that a rewrite keeps
// every field Claude Code wrote.
type credFile struct {
	raw   []byte // the file as read, which a move keeps byte for byte
	doc   map[string]json.RawMessage
	oauth map[string]json.RawMessage // doc's claudeAiOauth
	login struct {
		AccessToken  string `json:"accessToken"`
		RefreshToken string `json:"refreshToken"`
		ExpiresAt    int64  `json:"expiresAt"` // Unix milliseconds
	}
}

func parseFile(path string, data []byte) (*credFile, error) {
	cf := &credFile{raw: data}
	err := json.Unmarshal(data, &cf.doc)
	if raw := cf.doc["claudeAiOauth"]; err == nil && raw != nil {
		if err = json.Unmarshal(raw, &cf.oauth); err == nil {
			err = json.Unmarshal(raw, &cf.login)
		}
	}
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		line := 1 + bytes.Count(data[:min(int(syntax.Offset), len(data))], []byte("\n"))
		return nil, fmt.Errorf("%s:%d: not valid JSON (at byte %d): %w", path, line, syntax.Offset, err)
	case err != nil:
		return nil, fmt.Errorf("%s: not a Claude Code credentials file: %w", path, err)
	}
	return cf, nil
}

// loggedIn is false for a file that holds only other logins (MCP servers')
// or none.
func (cf *credFile) loggedIn() bool { return cf.oauth != nil && cf.login.AccessToken != "" }

// token is the secret to send now. A file login that expires within
// refreshBefore is refreshed first; when that fails, the old secret is sent
// and the failure kept for lastError.
func (c *Credential) token(rt http.RoundTripper, tokenURL string) string {
	s := c.st()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.refresh == "" || s.expires.IsZero() || s.expires.Sub(now) > refreshBefore || now.Before(s.retryAt) {
		return s.secret
	}
	s.err = s.refreshFile(rt, tokenURL)
	if s.err != nil {
		s.retryAt = now.Add(retryRefresh)
	}
	return s.secret
}

// lastError waits for a refresh in progress.
func (c *Credential) lastError() error {
	s := c.st()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// refreshFile renews the login under the lock of the kept login's
// directory, which other launchers take too, and saves the result to a new
// file renamed over the kept one: no write ever goes into a file that
// another name may reach, and the rename happens below the directory every
// sandbox covers, so no cover comes off (ADR 0039).
func (s *state) refreshFile(rt http.RoundTripper, tokenURL string) error {
	k, err := openKeeper(s.home)
	if err != nil {
		return fmt.Errorf("cannot refresh the login: %w", err)
	}
	defer k.close()
	cf, err := k.take()
	if err != nil {
		return err
	}
	if cf == nil {
		return fmt.Errorf("%s no longer holds a login; log in again", k.keptPath())
	}
	if cf.login.ExpiresAt > s.expires.UnixMilli() {
		// Another process refreshed meanwhile; our refresh token may be spent.
		s.secret, s.refresh, s.expires = cf.login.AccessToken, cf.login.RefreshToken, time.UnixMilli(cf.login.ExpiresAt)
		if time.Until(s.expires) > refreshBefore || s.refresh == "" {
			return nil
		}
	}
	now := time.Now()
	r, err := postRefresh(rt, tokenURL, s.refresh)
	if err != nil {
		return err
	}
	s.secret, s.expires = r.AccessToken, now.Add(time.Duration(r.ExpiresIn)*time.Second)
	if r.RefreshToken != "" {
		s.refresh = r.RefreshToken
	}
	for k, v := range map[string]any{"accessToken": s.secret, "refreshToken": s.refresh, "expiresAt": s.expires.UnixMilli()} {
		cf.oauth[k], _ = json.Marshal(v)
	}
	cf.doc["claudeAiOauth"], _ = json.Marshal(cf.oauth)
	out, err := json.Marshal(cf.doc)
	if err != nil {
		return err
	}
	if err := k.save(out); err != nil {
		return fmt.Errorf("the login was refreshed but not saved: %w", err)
	}
	return nil
}

type tokenReply struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"` // "" when the old one stays valid
	ExpiresIn    int64  `json:"expires_in"`    // seconds
}

// postRefresh asks the token endpoint for a new access token. Its errors
// name the status only: an answer's body could echo the refresh token.
func postRefresh(rt http.RoundTripper, tokenURL, refresh string) (*tokenReply, error) {
	body, err := json.Marshal(map[string]string{"grant_type": "refresh_token", "refresh_token": refresh, "client_id": clientID})
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: rt, Timeout: refreshTimeout}
	resp, err := client.Post(tokenURL, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("cannot refresh the login: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s refused to refresh the login: %s; log in again", tokenURL, resp.Status)
	}
	var r tokenReply
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r); err != nil || r.AccessToken == "" || r.ExpiresIn <= 0 {
		return nil, fmt.Errorf("%s answered the refresh without a usable token", tokenURL)
	}
	return &r, nil
}
