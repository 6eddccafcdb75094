package gitconfig

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/plainfile"
)

// maxIncludeDepth is git's: deeper includes make git stop, so nothing in
// them ever takes effect.
const maxIncludeDepth = 10

// File is a config file that Load read or that an include named.
type File struct {
	Path   string
	Exists bool // false: missing, and git skips it; a file created there later is read
}

// Load reads the config file at path and every file it includes, in the
// order git reads them: each include's entries follow the include line.
// It follows include.path and includeIf.<condition>.path whatever the
// condition, because a caller protecting what git may read needs every
// file that could apply. Relative include paths are taken from the
// including file's directory and "~/" is home, as git does; "~user/" and
// "%(prefix)/" paths are not followed (they name another user's or git's
// own installation). A missing file is listed and has no entries; a file
// that exists but cannot be read as a config (a directory, no permission)
// is listed too: git refuses it and stops, so nothing in it runs. One that
// is a FIFO, a device or larger than maxConfigFile is an error: the
// launch refuses it rather than wait on it or hold it.
func Load(path, home string) ([]Entry, []File, error) {
	return LoadFrom(path, path, home)
}

// LoadFrom is Load with the text of the file at path read from the file at
// from (a copy of it kept elsewhere); its includes are taken from path's
// directory, as git would take them.
func LoadFrom(path, from, home string) ([]Entry, []File, error) {
	l := &loader{home: home, path: path, from: from, conditional: true}
	err := l.load(path, 0)
	return l.entries, l.files, err
}

// LoadUnconditional is Load following include.path only: the entries git
// reads from the file wherever it reads the file. An includeIf's entries
// apply only in the repositories (or on the branches, or with the remotes)
// its condition names, so they are left out with the includeIf.
func LoadUnconditional(path, home string) ([]Entry, []File, error) {
	l := &loader{home: home, path: path, from: path}
	err := l.load(path, 0)
	return l.entries, l.files, err
}

type loader struct {
	home        string
	path, from  string // the file of Load read from elsewhere
	conditional bool   // includeIf's files are followed too
	entries     []Entry
	files       []File
}

func (l *loader) load(path string, depth int) error {
	src := path
	if path == l.path {
		src = l.from
	}
	data, err := readConfig(src)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) && !exists(src) {
		l.files = append(l.files, File{Path: path})
		return nil
	}
	l.files = append(l.files, File{Path: path, Exists: true})
	var refused *plainfile.Error
	if errors.As(err, &refused) && !plainfile.IsDir(err) {
		return err
	}
	if err != nil {
		return nil
	}
	entries, err := Parse(path, data)
	if err != nil {
		return err
	}
	for _, e := range entries {
		l.entries = append(l.entries, e)
		if e.Kind() != Include || e.NoValue || depth+1 > maxIncludeDepth || !l.conditional && e.Section() != "include" {
			continue
		}
		inc, ok := l.includePath(e.Value, path)
		if !ok {
			continue
		}
		if err := l.load(inc, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// includePath is where an include's value points, as git resolves it.
func (l *loader) includePath(value, from string) (string, bool) {
	value, ok := ExpandHome(value, l.home)
	if !ok || value == "" {
		return "", false
	}
	if !filepath.IsAbs(value) {
		value = filepath.Join(filepath.Dir(from), value)
	}
	return filepath.Clean(value), true
}

// maxConfigFile bounds a config file the launch reads: git's own are a few
// kilobytes, and a session may have left anything where an include points.
const maxConfigFile = 4 << 20

// readConfig reads a config file as a regular file of any owner's (a
// repository's may be another user's, and a link is the user's choice for
// ~/.gitconfig), bounded: a FIFO, a device or a huge file is refused, not
// waited on. /dev/null, which users name to load no global config, reads
// as empty.
func readConfig(path string) ([]byte, error) {
	if path == os.DevNull {
		return nil, nil
	}
	return plainfile.Read(path, plainfile.Limits{Max: maxConfigFile, Owner: plainfile.AnyOwner, FollowLinks: true})
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// ExpandHome resolves "~/" at the start of a path value as git does for
// pathname variables; other values are returned as they are, and ok is
// false for "~user/" and "%(prefix)/" values, which name places outside
// any workspace.
func ExpandHome(value, home string) (string, bool) {
	switch {
	case value == "~" || strings.HasPrefix(value, "~/"):
		if home == "" {
			return "", false
		}
		return filepath.Join(home, strings.TrimPrefix(value, "~")), true
	case strings.HasPrefix(value, "~"), strings.HasPrefix(value, "%(prefix)/"):
		return "", false
	}
	return value, true
}
