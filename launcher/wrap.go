package launcher

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/claude-sandbox/claude-sandbox/host"
	"github.com/claude-sandbox/claude-sandbox/internal/launchenv"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
)

// Wrap runs the Claude Code binary named by args[0] with args[1:] inside the
// sandbox, exactly as Run runs the real binary: same policy, same refusals.
// A nested call inside the sandbox runs the real binary, as Run does.
func Wrap(p host.Paths, args []string, env launchenv.Given, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "claude-sandbox: %s needs the absolute path of a Claude Code binary first, then its arguments (the calling convention of claudeCode.claudeProcessWrapper and the Agent SDK's executableArgs)\n", layout.WrapperName)
		return host.ExitRefused
	}
	bin, err := claudeBinary(args[0])
	if err != nil {
		PrintRefusal(stderr, fmt.Errorf("%s refuses %s: %w", layout.WrapperName, args[0], err))
		return host.ExitRefused
	}
	if _, ok := env.Lookup(sandbox.BackgroundRoleVar); ok && host.Inside() {
		return wrapInside(bin, args, env, stderr)
	}
	if r, err := backgroundRole(args[1:]); err == nil && r != plainLaunch {
		fmt.Fprintf(stderr, "claude-sandbox: %s refuses background sessions: they start from `claude` in a terminal, whose background service runs the pinned Claude Code (ADR 0026), never unsandboxed\n", layout.WrapperName)
		return host.ExitRefused
	}
	if self, err := os.Executable(); err == nil && !host.Inside() && !sameFile(bin, self) {
		p.RealBinary = bin
	}
	return Run(p, args[1:], env, stderr)
}

// claudeBinary checks, without running it, that path is a Claude Code
// binary as the extension and the SDKs ship it (an executable ELF file
// named claude or claude.exe), and returns it with links resolved: what
// bwrap binds read-only at ~/.local/bin/claude.
func claudeBinary(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", errors.New("not an absolute path, so not the Claude Code binary that the calling convention passes first")
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("cannot resolve it: %v", errors.Unwrap(err))
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", errors.New("not an executable file, so not a Claude Code binary")
	}
	if !claudeName(path) && !claudeName(resolved) {
		return "", errors.New("not named claude or claude.exe, so not a Claude Code binary")
	}
	f, err := os.Open(resolved)
	if err != nil {
		return "", err
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil || !bytes.Equal(magic, []byte("\x7fELF")) {
		return "", errors.New("not a native executable, so not a Claude Code binary")
	}
	return resolved, nil
}

func claudeName(path string) bool {
	base := filepath.Base(path)
	return base == "claude" || base == "claude.exe"
}

func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
