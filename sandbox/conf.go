// Package sandbox turns the admin's configuration and the facts of one launch
// into the exact bubblewrap argv and seccomp filter that confine Claude Code.
// It changes nothing: it reads the conf, and looks at the shape of the file
// system (which protected paths exist, where symlinks lead); the facts about
// the user and the host arrive in a Launch value. Read policy.go for the
// mounts and environment, seccomp.go for the syscall filter.
package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
)

// ConfPath is the only place the launcher reads its configuration from. It is
// root-owned and outside every path the sandbox can write (ADR 0002).
const ConfPath = "/etc/claude-sandbox.conf"

// Conf is the parsed /etc/claude-sandbox.conf. Repeatable keys keep the order
// in which the admin wrote them.
type Conf struct {
	WorkspaceRoot string   // workspace-root: the writable workspace; empty means discover it
	AllowWrite    []Line   // allow-write: extra absolute paths bound read-write
	PassEnv       []Line   // pass-env: extra variable names passed into the sandbox
	Protect       []Line   // protect: extra workspace-relative paths kept read-only
	ShareHome     []Line   // share-home: home-relative paths bound read-only into the tmpfs home
	AppendPath    []Line   // append-path: absolute directories appended to PATH after the system ones
	NoForge       bool     // no-forge: forge tokens and forge CLI config never enter
	Source        string   // file name used in error messages
	workspaceLine int      // line of workspace-root, for error messages
	seen          []string // single-valued keys already set
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

// Keys that take a value, and bare flags. Keys the network issue will honour
// are recognised so their refusal can say why, rather than "unknown key".
var (
	valueKeys = map[string]bool{
		"workspace-root": true, "allow-write": true, "pass-env": true,
		"protect": true, "share-home": true, "append-path": true,
	}
	flagKeys    = map[string]bool{"no-forge": true}
	pendingKeys = map[string]string{
		"egress-jail": "network egress policy is not implemented yet; remove the line",
		"allow-ip":    "network egress policy is not implemented yet; remove the line",
		"network":     "network egress policy is not implemented yet; remove the line",
	}
)

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseConf reads a conf. name is used in error messages. The first problem
// found is returned; nothing is guessed.
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
		if why, ok := pendingKeys[key]; ok {
			return nil, fail("%q: %s", key, why)
		}
		switch {
		case flagKeys[key]:
			if hasValue {
				return nil, fail("%q is a bare flag and takes no value", key)
			}
		case valueKeys[key]:
			if !hasValue || value == "" {
				return nil, fail("%q needs a value (%s = VALUE)", key, key)
			}
		default:
			return nil, fail("unknown key %q", key)
		}
		if err := c.set(key, value, n); err != nil {
			return nil, fail("%s", err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &ConfError{File: name, Msg: err.Error()}
	}
	return c, nil
}

func (c *Conf) set(key, value string, line int) error {
	switch key {
	case "workspace-root", "no-forge":
		for _, k := range c.seen {
			if k == key {
				return fmt.Errorf("%q is set twice", key)
			}
		}
		c.seen = append(c.seen, key)
	}
	switch key {
	case "no-forge":
		c.NoForge = true
	case "workspace-root":
		if err := checkAbs(value); err != nil {
			return fmt.Errorf("workspace-root: %v", err)
		}
		c.WorkspaceRoot, c.workspaceLine = value, line
	case "allow-write":
		if err := checkAbs(value); err != nil {
			return fmt.Errorf("allow-write: %v", err)
		}
		c.AllowWrite = append(c.AllowWrite, Line{value, line})
	case "append-path":
		if err := checkAbs(value); err != nil {
			return fmt.Errorf("append-path: %v", err)
		}
		if strings.Contains(value, ":") {
			return fmt.Errorf("append-path: %q contains ':'; give one directory per line", value)
		}
		c.AppendPath = append(c.AppendPath, Line{value, line})
	case "pass-env":
		if !envNameRE.MatchString(value) {
			return fmt.Errorf("pass-env: %q is not a variable name", value)
		}
		if why := neverPassed(value); why != "" {
			return fmt.Errorf("pass-env: %s can never be passed into the sandbox (%s)", value, why)
		}
		c.PassEnv = append(c.PassEnv, Line{value, line})
	case "protect":
		if err := checkRel(value); err != nil {
			return fmt.Errorf("protect: %v", err)
		}
		c.Protect = append(c.Protect, Line{value, line})
	case "share-home":
		if err := checkRel(value); err != nil {
			return fmt.Errorf("share-home: %v", err)
		}
		c.ShareHome = append(c.ShareHome, Line{value, line})
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

// NetworkMode is the sandbox's network as the status line and verify report
// it: "open", the container's own network, is the only mode until the egress
// policy lands (the conf refuses the network key until then).
func (c *Conf) NetworkMode() string { return "open" }
