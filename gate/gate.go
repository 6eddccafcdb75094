// Package gate is Claude Code's UserPromptSubmit hook that blocks every
// prompt of a session running outside the sandbox, for example when someone
// starts the real binary directly. The installer stamps it into the managed
// settings, which user and project settings cannot switch off.
package gate

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// Block is the hook status that makes Claude Code refuse the prompt and show
// stderr. Any other non-zero status would let the prompt through, so every
// failure of the gate blocks too (and the hook is stamped with
// "onFailure": "block" for the case where the gate cannot start at all).
const Block = 2

// Check decides one prompt. inside is host.Inside(); override is the
// root-owned file with which an administrator allows unsandboxed sessions on
// this machine. The hook's input on stdin is read and ignored: the decision
// never depends on anything the session controls.
func Check(inside bool, override string, stdin io.Reader, stderr io.Writer) int {
	io.Copy(io.Discard, stdin)
	if inside {
		return 0
	}
	if err := adminOverride(override); err == nil {
		return 0
	} else if !os.IsNotExist(err) {
		fmt.Fprintf(stderr, "claude-sandbox: ignoring %s: %v\n", override, err)
	}
	fmt.Fprintf(stderr, "claude-sandbox: this Claude Code session runs outside the sandbox, so its prompts are blocked. "+
		"Quit and start it with `claude`, which runs it inside the sandbox "+
		"(an IDE or an SDK app starts its own Claude Code through "+layout.Wrapper+"). "+
		"(An administrator can allow unsandboxed sessions on this machine by creating %s as root.)\n", override)
	return Block
}

// adminOverride accepts the override only when no one but root could have
// made it: a regular file (not a link) owned by root and writable by no one
// else, in a directory owned by root and writable by no one else.
func adminOverride(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file")
	}
	if err := rootOnly(fi); err != nil {
		return err
	}
	dir, err := os.Lstat(filepath.Dir(path))
	if err != nil {
		return err
	}
	if err := rootOnly(dir); err != nil {
		return fmt.Errorf("its directory: %w", err)
	}
	return nil
}

func rootOnly(fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid != 0 {
		return fmt.Errorf("not owned by root")
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("writable by users other than root")
	}
	return nil
}
