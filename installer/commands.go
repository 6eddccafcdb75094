package installer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/templates"
)

func verifyCommand() ([]byte, error) {
	return templates.VerifyCommand(layout.LauncherBinary)
}

// planManagedCommand installs /verify-sandbox. A file of that name that
// is not ours (it does not run our verify) is the admin's and is kept.
func (in *run) planManagedCommand() error {
	want, err := verifyCommand()
	if err != nil {
		return err
	}
	p := in.path(layout.VerifySlashCommand)
	old, err := os.ReadFile(p)
	switch {
	case err == nil && bytes.Equal(old, want):
		return nil
	case err == nil && !bytes.Contains(old, []byte(layout.VerifyCommand)):
		fmt.Fprintf(in.out, "claude-sandbox: left %s as it is (it is not the product's /verify-sandbox)\n", layout.VerifySlashCommand)
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	in.add("wrote "+layout.VerifySlashCommand+" (the /verify-sandbox command)", lineDiff(layout.VerifySlashCommand, old, want), func() error {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return writeAtomic(p, want, 0o644)
	})
	return nil
}

// planCommandRemoval removes /verify-sandbox if it is ours, and the
// directories it needed if they are then empty.
func (in *run) planCommandRemoval() error {
	p := in.path(layout.VerifySlashCommand)
	old, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !bytes.Contains(old, []byte(layout.VerifyCommand)) {
		return nil
	}
	in.add("removed "+layout.VerifySlashCommand, "", func() error {
		if err := os.Remove(p); err != nil {
			return err
		}
		for dir := filepath.Dir(p); dir != in.path(filepath.Dir(layout.ManagedSettings)); dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil {
				break // not empty: someone else's commands live there
			}
		}
		return nil
	})
	return nil
}
