package promote

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
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
// the same command. A repository that installs from postCreate.sh also gets
// the install script, pinned to this version.
func curatedFiles(version string, postCreate bool) ([]curatedFile, error) {
	verify, err := templates.VerifyCommand(layout.LauncherBinary)
	if err != nil {
		return nil, err
	}
	files := []curatedFile{
		{path: ".claude/commands/verify-sandbox.md", what: "the /verify-sandbox command", data: verify},
		{path: ".claude/skills/claude-sandbox/SKILL.md", what: "the skill that explains the sandbox to Claude", data: skill},
	}
	if postCreate {
		script, err := templates.InstallScript(version)
		if err != nil {
			return nil, err
		}
		files = append(files, curatedFile{path: InstallScriptPath, what: "the script that installs claude-sandbox " + version + " from its release", data: script})
	}
	return files, nil
}

func hash(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
