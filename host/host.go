// Package host reads what this machine and user are, for the launcher,
// verify, the installer and the command line alike: the user's passwd
// entry and home, the conf, where bwrap is, whether this process runs
// inside a sandbox, and the recorded version of the real Claude Code. It
// reads them from the kernel and the files an administrator owns, never
// from the caller's environment. It sits below every package that acts on
// them.
package host

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/subtree"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// Paths are the product's files as this launch finds them: layout.Installed
// in the product, temporary files in tests.
type Paths = layout.Layout

// ExitRefused is the status of every refusal of the product's commands:
// the launcher refusing to start or the sandbox not set up (Claude never
// runs then), a command run where it has no meaning, a usage error.
const ExitRefused = 125

// FindBwrap returns the absolute path of bwrap from p.Bwrap, or an error
// with the fix.
func FindBwrap(p Paths) (string, error) {
	for _, b := range p.Bwrap {
		if fi, err := os.Stat(b); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return b, nil
		}
	}
	return "", fmt.Errorf("bubblewrap is not installed (looked for %s); install it (apt-get install bubblewrap, apk add bubblewrap, dnf install bubblewrap) or run `sudo claude-sandbox install`", strings.Join(p.Bwrap, ", "))
}

// LoadConf reads the conf; a missing file means the defaults.
func LoadConf(path string) (*sandbox.Conf, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &sandbox.Conf{Source: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, errors.Unwrap(err))
	}
	defer f.Close()
	return sandbox.ParseConf(path, f)
}

// UserHome is the calling user's home from the passwd database, with
// symlinks resolved.
func UserHome(p Paths) (string, error) {
	u, _, err := readPasswd(p.Passwd, os.Getuid())
	if err != nil {
		return "", err
	}
	return resolveHome(u.home), nil
}

func resolveHome(home string) string {
	if resolved, err := filepath.EvalSymlinks(home); err == nil {
		return resolved
	}
	return home
}

// Facts gathers what the policy needs about this launch.
func Facts(p Paths, env launchenv.Env, args []string) (sandbox.Launch, error) {
	u, homes, err := readPasswd(p.Passwd, os.Getuid())
	if err != nil {
		return sandbox.Launch{}, err
	}
	cwd, err := unix.Getwd()
	if err != nil {
		return sandbox.Launch{}, fmt.Errorf("cannot read the working directory: %w", err)
	}
	home := resolveHome(u.home)
	shell := u.shell
	if shell == "" || !filepath.IsAbs(shell) {
		shell = "/bin/sh"
	}
	self, err := os.Executable()
	if err != nil {
		return sandbox.Launch{}, fmt.Errorf("cannot find the launcher's own binary: %w", err)
	}
	l := sandbox.Launch{User: u.name, Home: home, Homes: homes, Shell: shell, Cwd: cwd, Env: env, Args: args, RealBinary: p.RealBinary, Masks: p.Masks, Launcher: self}
	if _, err := os.Lstat(p.OutsideSettings); err == nil && p.OutsideSettings != "" {
		l.OutsideSettings, l.InsideSettings = p.OutsideSettings, p.InsideSettings
	}
	if l.Masks == nil {
		for _, d := range sandbox.MaskedDirs() {
			if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
				l.Masks = append(l.Masks, d)
			}
		}
		// DNS keeps working when resolv.conf is a link into /run (systemd-resolved).
		if target, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && target != "/etc/resolv.conf" {
			for _, d := range l.Masks {
				if target != d && subtree.Of(d).Contains(target) {
					l.Keep = append(l.Keep, target)
					break
				}
			}
		}
	}
	return l, nil
}

type passwd struct{ name, home, shell string }

// readPasswd returns uid's entry and every home the database names. It
// reads /etc/passwd directly: os/user without cgo falls back to $HOME and
// $USER, which the caller controls.
func readPasswd(path string, uid int) (passwd, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return passwd{}, nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	defer f.Close()
	var u *passwd
	var homes []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 7 {
			continue
		}
		homes = append(homes, fields[5])
		if u == nil && fields[2] == strconv.Itoa(uid) {
			u = &passwd{name: fields[0], home: fields[5], shell: fields[6]}
		}
	}
	if u == nil {
		return passwd{}, nil, fmt.Errorf("uid %d has no entry in %s; the sandbox needs a named user with a home directory", uid, path)
	}
	return *u, homes, nil
}
