package installer

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
)

// insideSettings set nothing but what only sessions inside the sandbox
// may have: bypass-permissions mode without Claude Code's warning, which
// asks for the sandbox the session already runs in (accepting the warning
// inside writes ~/.claude/settings.json, read-only there, so without this
// it came back at every launch, ADR 0023). Background sessions keep
// Claude Code's own worktree isolation: worktrees are made inside since
// ADR 0034 (ADR 0028 turned it off while they could not be). A regular
// file: Claude Code refuses a settings file that is a device.
var insideSettings = []byte("{\"skipDangerousModePermissionPrompt\": true}\n")

// outsideSettings keeps a Claude Code started outside the sandbox (an IDE's
// bundled binary, an SDK app, the real binary run directly) from running
// anything a session could have written, before its first prompt reaches
// the gate: only managed hooks, and no status line, file suggestion or
// subagent status line but the managed one (allowManagedHooksOnly); no MCP
// server from .mcp.json or ~/.claude.json (strictPluginOnlyCustomization);
// no marketplace a settings file names, so no plugin installed from the
// workspace (strictKnownMarketplaces); no shell lines in skills and
// commands (disableSkillShellExecution, for a session the gate's override
// lets through); no scheduled task (CLAUDE_CODE_DISABLE_CRON: a task in
// .claude/scheduled_tasks.json is put to a Claude Code started later as a
// prompt nobody typed, at its start when the task was missed, and the
// gate's override lets it through); and every helper command empty, which
// Claude Code takes for none. The status line is the product's, which says
// NOT SANDBOXED.
// Drop-ins apply to every Claude Code on the machine: the sandbox covers
// this one with insideSettings, so sessions inside keep the user's hooks,
// MCP servers and helpers, and run them sandboxed.
var outsideSettings = []byte(`{
  "allowManagedHooksOnly": true,
  "strictPluginOnlyCustomization": ["mcp"],
  "strictKnownMarketplaces": [],
  "disableSkillShellExecution": true,
  "apiKeyHelper": "",
  "awsAuthRefresh": "",
  "awsCredentialExport": "",
  "gcpAuthRefresh": "",
  "otelHeadersHelper": "",
  "proxyAuthHelper": "",
  "env": {"CLAUDE_CODE_DISABLE_CRON": "1"},
  "statusLine": ` + layout.StatusLine + `
}
`)

// planInsideSettings writes the file the sandbox binds over the drop-in.
func (in *run) planInsideSettings() {
	p := in.path(layout.InsideSettings)
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, insideSettings) {
		return
	}
	in.add("wrote "+layout.InsideSettings+" (what a session sees in place of the lock-down for Claude Code outside)", "", func() error {
		return writeAtomic(p, insideSettings, 0o644)
	})
}

// planOutsideSettings writes the drop-in. The file is the product's: a
// changed copy is put back (an admin changes what it sets with a drop-in
// that sorts after it, whose single values win).
func (in *run) planOutsideSettings() error {
	p := in.path(layout.OutsideSettings)
	old, err := os.ReadFile(p)
	switch {
	case err == nil && bytes.Equal(old, outsideSettings):
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	what := "wrote " + layout.OutsideSettings + " (nothing a session wrote runs in a Claude Code outside the sandbox)"
	if err == nil {
		what = "replaced " + layout.OutsideSettings + " with the product's (it had been changed)"
	}
	in.add(what, lineDiff(layout.OutsideSettings, old, outsideSettings), func() error {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return writeAtomic(p, outsideSettings, 0o644)
	})
	return nil
}

// planOutsideRemoval removes the drop-in, and its directory if nothing
// else is in it.
func (in *run) planOutsideRemoval() {
	p := in.path(layout.OutsideSettings)
	if _, err := os.Lstat(p); err != nil {
		return
	}
	in.add("removed "+layout.OutsideSettings, "", func() error {
		if err := os.Remove(p); err != nil {
			return err
		}
		os.Remove(filepath.Dir(p)) // fails, and stays, when the admin has drop-ins there
		return nil
	})
}
