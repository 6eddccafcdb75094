// Package sandbox turns the admin's configuration and the facts of one launch
// into the plan (plan.go) that confines Claude Code: the bubblewrap argv
// rendered from it (bwrap.go) and the seccomp filter (seccomp.go). It
// changes nothing. Resolve (resolve.go) reads the conf's paths and the shape
// of the file system through the readers, one file each by what they find
// to hold (find_*.go: the one walk for repositories and toolchain files,
// git's directories and what their configuration names, other
// version-control systems, toolchain selectors, dev container files,
// command files and the directories commands load modules from), which
// hand it holds (hold.go) that the protections turn into mounts and name
// rules (protect.go); the facts about the user and the host arrive in a
// Launch value; Assemble (assemble.go) puts the mounts and the environment
// together from those, reading nothing. The policy's lists are in
// lists.go: what it protects, hides, passes and carries, and what its
// readers look for; two tables are their own files, the seccomp filter's
// (seccomp.go) and the conf's schema (confkeys.go). The lists it takes
// from the packages that read a format are there: the git variables that
// run a program (gitconfig), the shells, interpreters and wrappers a
// command line is read through (internal/shellcmd), the hosts of each
// allow-preset (internal/hostaddr).
package sandbox

import (
	"bufio"
	"fmt"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// Conf is the parsed /etc/claude-sandbox.conf: each field is where a key of
// confKeys stores its values. Repeatable keys keep the order in which the
// admin wrote them.
type Conf struct {
	WorkspaceRoot string // workspace-root: the writable workspace; empty means discover it
	AllowWrite    []Line // allow-write: extra absolute paths bound read-write
	// allow-write-executable: as allow-write, for paths whose contents run
	// outside the sandbox later; the admin accepts that risk (ADR 0013)
	AllowWriteExecutable []Line
	SandboxCache         []Line   // sandbox-cache: home-relative directories kept between sessions, seen only inside
	PassEnv              []Line   // pass-env: extra variable names passed into the sandbox
	Protect              []Line   // protect: extra workspace-relative paths kept read-only
	ShareHome            []Line   // share-home: home-relative paths bound read-only into the tmpfs home
	AppendPath           []Line   // append-path: absolute directories appended to PATH after the system ones
	NoForge              bool     // no-forge: forge tokens and forge CLI config never enter
	Network              string   // network: "open" or "allowlist"; empty means the default, allowlist
	AllowDomain          []Line   // allow-domain: HOST[:PORT] the allowlist proxy lets through
	AllowPreset          []Line   // allow-preset: named lists of package hosts the allowlist proxy lets through
	AllowIP              []Line   // allow-ip: IP or CIDR the allowlist proxy may reach although not public
	Credentials          string   // credentials: "proxy" or "inside"; empty means the default, proxy
	Forge                []Line   // forge: HOST[:PORT] whose credential the launcher adds outside (ADR 0042)
	PushRef              []Line   // push-ref: ref patterns a push to a forge may create or update
	PushDelete           []Line   // push-delete: ref patterns a push to a forge may delete
	PushForce            []Line   // push-force: ref patterns a push to a forge may move to a commit not descending from the old one
	ForgeAPI             []Line   // forge-api: writes a forge's API may be asked with the user's credential, or ! ones taken away
	Source               string   // file name used in error messages
	workspaceLine        int      // line of workspace-root, for error messages
	seen                 []string // single-valued keys already set
}

// Line is one value of a repeatable key together with where it was written,
// so a later check can name the line that is wrong.
type Line struct {
	Value string
	Line  int
}

// ConfError is a conf problem that names the file and line.
type ConfError struct {
	File string
	Line int
	Msg  string
}

func (e *ConfError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Network and credential modes (confKeys gives the defaults).
const (
	NetworkOpen       = "open"      // the container's network, as it is
	NetworkAllowlist  = "allowlist" // own network namespace; out only through the launcher's proxy
	CredentialsProxy  = "proxy"     // the login stays outside; the launcher's proxy adds it
	CredentialsInside = "inside"    // the login enters the sandbox, as Claude Code expects by itself
)

// ParseConf reads a conf. name is used in error messages. The first problem
// found is returned; nothing is guessed. The keys and their checks are
// confKeys'.
func ParseConf(name string, r io.Reader) (*Conf, error) {
	c := &Conf{Source: name}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		key, value, hasValue := strings.Cut(text, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		fail := func(format string, args ...any) error {
			return &ConfError{File: name, Line: n, Msg: fmt.Sprintf(format, args...)}
		}
		k, ok := lookupKey(key)
		switch {
		case !ok:
			return nil, fail("unknown key %q", key)
		case k.Kind == KeyRetired:
			return nil, fail("%q %s; write %s", key, k.Why, k.Instead)
		case k.Kind == KeyFlag && hasValue:
			return nil, fail("%q is a bare flag and takes no value", key)
		case k.Kind != KeyFlag && (!hasValue || value == ""):
			return nil, fail("%q needs a value (%s = VALUE)", key, key)
		}
		if err := c.set(k, value, n); err != nil {
			return nil, fail("%s", err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &ConfError{File: name, Msg: err.Error()}
	}
	if err := c.checkCaches(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Conf) set(k ConfKey, value string, line int) error {
	if k.Once() {
		if slices.Contains(c.seen, k.Name) {
			return fmt.Errorf("%q is set twice", k.Name)
		}
		c.seen = append(c.seen, k.Name)
	}
	if err := k.Check(value); err != nil {
		return err
	}
	k.put(c, value, line)
	return nil
}

// checkCaches refuses a sandbox-cache inside another one or overlapping a
// share-home entry: one mount would hide the other, and a cache's directory
// would hold the other's mount point.
func (c *Conf) checkCaches() error {
	for i, sc := range c.SandboxCache {
		rel := strings.TrimSuffix(sc.Value, "/")
		fail := func(what string, other Line) error {
			return &ConfError{File: c.Source, Line: sc.Line, Msg: fmt.Sprintf("sandbox-cache: %q overlaps %s = %s (line %d); give directories that do not contain each other", sc.Value, what, other.Value, other.Line)}
		}
		for _, other := range c.SandboxCache[:i] {
			if o := strings.TrimSuffix(other.Value, "/"); subtree.Of(o).Contains(rel) || subtree.Of(rel).Contains(o) {
				return fail("sandbox-cache", other)
			}
		}
		for _, sh := range c.ShareHome {
			if o := strings.TrimSuffix(sh.Value, "/"); subtree.Of(o).Contains(rel) || subtree.Of(rel).Contains(o) {
				return fail("share-home", sh)
			}
		}
	}
	return nil
}

func checkAbs(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%q is not an absolute path", p)
	}
	if filepath.Clean(p) != strings.TrimSuffix(p, "/") && p != "/" {
		return fmt.Errorf("%q is not a clean path (write it as %q)", p, filepath.Clean(p))
	}
	return nil
}

// checkRel accepts a clean relative path that stays below its base. A
// trailing slash is kept by callers to mean "a directory".
func checkRel(p string) error {
	trimmed := strings.TrimSuffix(p, "/")
	if trimmed == "" || filepath.IsAbs(p) {
		return fmt.Errorf("%q must be a relative path", p)
	}
	if filepath.Clean(trimmed) != trimmed || trimmed == "." || trimmed == ".." || strings.HasPrefix(trimmed, "../") {
		return fmt.Errorf("%q must be a clean relative path without '..'", p)
	}
	return nil
}

// NetworkMode is the sandbox's network: the conf's network line, else
// the key's default, allowlist.
func (c *Conf) NetworkMode() string { return orDefault(c.Network, "network") }

// CredentialMode is where Claude Code's login lives: the conf's credentials
// line, else the key's default, proxy.
func (c *Conf) CredentialMode() string { return orDefault(c.Credentials, "credentials") }

func orDefault(value, key string) string {
	if value == "" {
		k, _ := lookupKey(key)
		return k.Default
	}
	return value
}
