package verify

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/envlist"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// What the credential checks report when there is no session token to
// check: the admin let the login in, or the launcher found none.
const (
	insideDetail  = "credentials = inside: the login enters the sandbox by the admin's choice"
	noLoginDetail = "no login found at launch, so no session token: Claude logs in inside this session, and from the next launch the login stays outside"
)

// loginVars carry a login Claude Code would use; with the credential proxy
// none enters.
var loginVars = []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}

// credentialPlaceholder: with credentials = proxy, Claude started with the
// launcher's session token and the credential proxy's address instead of
// its login, so nothing inside holds a key or token that works elsewhere.
func credentialPlaceholder(f *facts) (string, error) {
	if err := firstError(f.confErr, f.startEnvErr); err != nil {
		return "", err
	}
	if f.conf.CredentialMode() == sandbox.CredentialsInside {
		return insideDetail, nil
	}
	env := envlist.Map(f.startEnv)
	var leaked []string
	for _, n := range loginVars {
		if env[n] != "" {
			leaked = append(leaked, n)
		}
	}
	token := f.sessionToken()
	if token == "" && env["ANTHROPIC_AUTH_TOKEN"] != "" {
		leaked = append(leaked, "ANTHROPIC_AUTH_TOKEN (not a session token)")
	}
	if len(leaked) > 0 {
		return "", fmt.Errorf("credentials = proxy, yet pid %d started with a login: %s", f.firstPID, strings.Join(leaked, ", "))
	}
	if token == "" {
		return noLoginDetail, nil
	}
	base := env["ANTHROPIC_BASE_URL"]
	if ok, want := credentialProxyURL(base, f.conf.NetworkMode()); !ok {
		return "", fmt.Errorf("ANTHROPIC_AUTH_TOKEN is a session token, but ANTHROPIC_BASE_URL is not the credential proxy (%s)", want)
	}
	return fmt.Sprintf("ANTHROPIC_AUTH_TOKEN is a session token, ANTHROPIC_BASE_URL the credential proxy at %s; no %s", base, strings.Join(loginVars, " or ")), nil
}

// credentialProxyURL reports whether base is the credential proxy, and
// what it must be: the fixed address in allowlist mode, a port on the
// container's loopback in open mode.
func credentialProxyURL(base, mode string) (bool, string) {
	if mode == sandbox.NetworkAllowlist {
		want := "http://" + sandbox.AuthProxyAddr
		return base == want, want
	}
	port, ok := strings.CutPrefix(base, "http://127.0.0.1:")
	n, err := strconv.Atoi(port)
	return ok && err == nil && n > 0 && n < 1<<16, "http://127.0.0.1:PORT"
}

// credentialFileHidden: with a session token, Claude Code's login file is
// absent, the null device (the launcher binds /dev/null over it) or empty,
// so the login the credential proxy adds is not readable inside.
func credentialFileHidden(f *facts) (string, error) {
	if err := firstError(f.confErr, f.startEnvErr, f.launchErr); err != nil {
		return "", err
	}
	switch {
	case f.conf.CredentialMode() == sandbox.CredentialsInside:
		return insideDetail, nil
	case f.sessionToken() == "":
		return noLoginDetail, nil
	}
	return hiddenFile(filepath.Join(f.launch.launch.Home, layout.CredentialsFile))
}

// hiddenFile checks that path shows nothing: absent, the null device, or
// empty. Its content is never read beyond one byte, nor shown.
func hiddenFile(path string) (string, error) {
	var st unix.Stat_t
	err := unix.Lstat(path, &st)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path + " is absent", nil
	case err != nil:
		return "", unreadable(path, err)
	case st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == unix.Mkdev(1, 3):
		// bwrap's binds are nodev, so opening it fails; it is /dev/null.
		return path + " is the null device", nil
	}
	file, err := os.Open(path)
	if err != nil {
		return "", unreadable(path, err)
	}
	defer file.Close()
	n, err := file.Read(make([]byte, 1))
	switch {
	case n > 0:
		return "", fmt.Errorf("%s is not empty: the login the credential proxy keeps outside is readable inside", path)
	case err != io.EOF:
		return "", unreadable(path, err)
	}
	return path + " reads empty", nil
}

func unreadable(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s cannot be read (%w), and it is not the null device the launcher binds there", path, err)
}
