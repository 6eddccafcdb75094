package authproxy_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/authproxy"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

const fileLogin = `{"claudeAiOauth":{"accessToken":"sk-ant-oat01-file","refreshToken":"sk-ant-ort01-file","expiresAt":4102444800000,"scopes":["user:inference"],"subscriptionType":"max"}}`

// writeLogin writes a credentials file under a fresh home and returns the home.
func writeLogin(t *testing.T, content string) string {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, layout.CredentialsFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestFindPrecedence(t *testing.T) {
	withFile := writeLogin(t, fileLogin)
	fileSource := filepath.Join(withFile, layout.CredentialsFile)
	all := []string{"ANTHROPIC_AUTH_TOKEN=gateway", "ANTHROPIC_API_KEY=sk-ant-api03-key", "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-env"}
	for _, tc := range []struct {
		name    string
		environ []string
		kind    authproxy.Kind
		source  string
		secret  string
	}{
		{"auth token wins", all, authproxy.Bearer, "ANTHROPIC_AUTH_TOKEN", "gateway"},
		{"API key before OAuth token", all[1:], authproxy.APIKey, "ANTHROPIC_API_KEY", "sk-ant-api03-key"},
		{"OAuth token before the file", all[2:], authproxy.OAuth, "CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-env"},
		{"the file last", nil, authproxy.OAuth, fileSource, "sk-ant-oat01-file"},
		{"empty variables are unset", []string{"ANTHROPIC_AUTH_TOKEN=", "ANTHROPIC_API_KEY=", "CLAUDE_CODE_OAUTH_TOKEN="}, authproxy.OAuth, fileSource, "sk-ant-oat01-file"},
		{"an empty variable does not hide a later one", []string{"ANTHROPIC_AUTH_TOKEN=", "ANTHROPIC_API_KEY=sk-ant-api03-key"}, authproxy.APIKey, "ANTHROPIC_API_KEY", "sk-ant-api03-key"},
		{"first definition counts", []string{"ANTHROPIC_API_KEY=first", "ANTHROPIC_API_KEY=second"}, authproxy.APIKey, "ANTHROPIC_API_KEY", "first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := authproxy.Find(launchenv.Read(tc.environ), withFile)
			if err != nil || c == nil {
				t.Fatalf("Find = %v, %v", c, err)
			}
			if c.Kind != tc.kind || c.Source != tc.source {
				t.Errorf("Find = %v (%s), want %v (%s)", c.Kind, c.Source, tc.kind, tc.source)
			}
			if got := forwarded(t, c); got != tc.secret {
				t.Errorf("the upstream got %q, want %q", got, tc.secret)
			}
		})
	}
}

func TestFindNothing(t *testing.T) {
	for name, home := range map[string]string{
		"no file":             t.TempDir(),
		"no Claude login":     writeLogin(t, `{"mcpOAuth":{"server":{"accessToken":"x"}}}`),
		"null login":          writeLogin(t, `{"claudeAiOauth":null}`),
		"login without token": writeLogin(t, `{"claudeAiOauth":{"accessToken":""}}`),
	} {
		c, err := authproxy.Find(launchenv.Read([]string{"ANTHROPIC_API_KEY=", "HOME=/x"}), home)
		if c != nil || err != nil {
			t.Errorf("%s: Find = %v, %v; want nothing", name, c, err)
		}
	}
}

func TestFindBadFile(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"syntax", "{\n  \"claudeAiOauth\": {\n    \"accessToken\": \"sk-ant-oat01-secret\",,\n", ":3: not valid JSON"},
		{"not an object", `["sk-ant-oat01-secret"]`, "not a Claude Code credentials file"},
		{"wrong type", `{"claudeAiOauth":{"accessToken":"sk-ant-oat01-secret","expiresAt":"tomorrow"}}`, "not a Claude Code credentials file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := writeLogin(t, tc.content)
			_, err := authproxy.Find(launchenv.Env{}, home)
			if err == nil {
				t.Fatal("Find accepted a malformed file")
			}
			path := filepath.Join(home, layout.CredentialsFile)
			if !strings.Contains(err.Error(), path+tc.want) && !strings.Contains(err.Error(), path+": "+tc.want) {
				t.Errorf("error %q does not name %s with %q", err, path, tc.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q shows the token", err)
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		home := t.TempDir()
		path := filepath.Join(home, layout.CredentialsFile)
		if err := os.MkdirAll(path, 0o700); err != nil { // a directory cannot be read, even by root
			t.Fatal(err)
		}
		if _, err := authproxy.Find(launchenv.Env{}, home); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Find = %v; want an error naming %s", err, path)
		}
	})
}

func TestCredentialNeverPrintsSecret(t *testing.T) {
	home := writeLogin(t, fileLogin)
	for _, environ := range [][]string{{"ANTHROPIC_AUTH_TOKEN=sk-secret-1"}, {"ANTHROPIC_API_KEY=sk-secret-2"}, {"CLAUDE_CODE_OAUTH_TOKEN=sk-secret-3"}, nil} {
		c, err := authproxy.Find(launchenv.Read(environ), home)
		if err != nil {
			t.Fatal(err)
		}
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%p"} {
			for _, arg := range []any{c, *c, []*authproxy.Credential{c}, struct{ C authproxy.Credential }{*c}, struct{ c authproxy.Credential }{*c}} {
				out := fmt.Sprintf(verb, arg)
				if strings.Contains(out, "sk-") || strings.Contains(out, "736b2d") { // "sk-" in hex
					t.Errorf("Sprintf(%q) of %T shows the secret: %s", verb, arg, out)
				}
			}
		}
		if want := c.Kind.String() + " from " + c.Source; c.String() != want {
			t.Errorf("String() = %q, want %q", c.String(), want)
		}
	}
}

// The login's path is in the writable ~/.claude until a login exists: a
// session may leave anything there. Find reads only a regular file, and
// a bounded one; a FIFO does not block it.
func TestFindReadsOnlyAPlainLoginFile(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(path string) error
		want string
	}{
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }, " is a FIFO, not a regular file"},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o700) }, " is a directory, not a regular file"},
		{"a huge file", func(p string) error { return os.Truncate(p, 1<<40) }, " is larger than the 1048576 bytes the launcher reads of it"},
		{"a link", func(p string) error { os.Remove(p); return os.Symlink("/dev/zero", p) }, " is a symbolic link; the sandbox hides the login"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := writeLogin(t, fileLogin)
			path := filepath.Join(home, layout.CredentialsFile)
			if c.name != "a huge file" {
				os.Remove(path)
			}
			if err := c.make(path); err != nil {
				t.Fatal(err)
			}
			cred, err := authproxy.Find(launchenv.Env{}, home)
			if cred != nil || err == nil || !strings.Contains(err.Error(), path+c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Find = %v, %v; want one line with %q", cred, err, path+c.want)
			}
		})
	}
}
