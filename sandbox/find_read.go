// How the readers read a file a session may have written.

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/claude-sandbox/claude-sandbox/internal/plainfile"
)

// workspaceFile is how the launch reads a file of the workspace's or of
// ~/.claude: the sandbox may have left anything there, so a FIFO, a device
// or a file larger than 4 MiB refuses the launch instead of blocking it
// or filling its memory (settings, devcontainer.json, git's pointer files
// are kilobytes). Any owner: a workspace bound from the host may be
// another uid's. A link is followed, and what it leads to checked the
// same way: where a link would carry a protection off its path, the
// policy refuses it with its own reason and fix.
var workspaceFile = plainfile.Limits{Max: 4 << 20, Owner: plainfile.AnyOwner, FollowLinks: true}

// readFile returns a regular file's content, or nil for a missing file or a
// directory (a stub another session holds).
func readFile(path string) ([]byte, error) {
	b, err := plainfile.Read(path, workspaceFile)
	if errors.Is(err, fs.ErrNotExist) || plainfile.IsDir(err) {
		return nil, nil
	}
	if err != nil {
		return nil, readError(path, err)
	}
	return b, nil
}

// readError says in one line why path could not be read.
func readError(path string, err error) error {
	var refused *plainfile.Error
	if errors.As(err, &refused) {
		return err
	}
	return fmt.Errorf("cannot read %s: %w", path, errors.Unwrap(err))
}
