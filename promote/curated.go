package promote

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"

	"github.com/claude-sandbox/claude-sandbox/installer"
	"github.com/claude-sandbox/claude-sandbox/templates"
)

//go:embed curated/SKILL.md
var skill []byte

// curatedFile is a file promote copies by value into the target's .claude.
type curatedFile struct {
	path string // relative to the target
	what string // what it is, for the summary
	data []byte
}

// curatedFiles are this version's copies. /verify-sandbox is rendered from
// the installer's template, so the repository and the managed settings get
// the same command.
func curatedFiles() ([]curatedFile, error) {
	verify, err := templates.VerifyCommand(installer.LauncherBinary)
	if err != nil {
		return nil, err
	}
	return []curatedFile{
		{path: ".claude/commands/verify-sandbox.md", what: "the /verify-sandbox command", data: verify},
		{path: ".claude/skills/claude-sandbox/SKILL.md", what: "the skill that explains the sandbox to Claude", data: skill},
	}, nil
}

func hash(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
