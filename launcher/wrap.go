package launcher

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// Wrap runs the Claude Code binary named by args[0] with args[1:] inside the
// sandbox, exactly as Run runs the real binary: same policy, same refusals.
// A nested call inside the sandbox runs the real binary, as Run does.
func Wrap(p Paths, args, environ []string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "claude-sandbox: %s needs the absolute path of a Claude Code binary first, then its arguments (the calling convention of claudeCode.claudeProcessWrapper and the Agent SDK's executableArgs)\n", layout.WrapperName)
		return ExitRefused
	}
	bin, err := claudeBinary(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "claude-sandbox: %s refuses %s: %v\n", layout.WrapperName, args[0], err)
		return ExitRefused
	}
	if self, err := os.Executable(); err == nil && !Inside() && !sameFile(bin, self) {
		p.RealBinary = bin
	}
	return Run(p, args[1:], environ, stderr)
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

// backgroundCommands are Claude Code's commands that start or reach its
// background service, when one is the first argument.
var backgroundCommands = []string{"agents", "attach", "daemon", "kill", "logs", "respawn", "rm", "stop"}

// refuseBackground refuses background sessions (`claude --bg`, `claude
// agents`, ...): their service listens on a unix socket, which the sandbox
// refuses, and must outlive the sandbox of the command that starts it. The
// launcher never runs them outside the sandbox instead.
func refuseBackground(args []string) error {
	const why = "background sessions are not available in the sandbox yet (their service needs a unix socket, which the sandbox refuses, and a sandbox that outlives this command), and claude-sandbox never runs them unsandboxed"
	if len(args) > 0 {
		for _, c := range backgroundCommands {
			if args[0] == c {
				return fmt.Errorf("`claude %s` is refused: %s", c, why)
			}
		}
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--bg" || a == "--background" || strings.HasPrefix(a, "--bg=") || strings.HasPrefix(a, "--background=") {
			return fmt.Errorf("`claude %s` is refused: %s", a, why)
		}
	}
	return nil
}
