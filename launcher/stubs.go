package launcher

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"golang.org/x/sys/unix"
)

// A protected path that is missing at launch is held by a read-only stub
// that the launcher creates in the workspace. Stubs are removed when the last
// session in the workspace ends. Removing a stub detaches the mount on it in
// every other sandbox too, so each session holds a shared flock on the
// workspace directory itself, and stubs are removed only under an exclusive
// one. Each user records the stubs their sessions created, under a home
// directory the sandbox cannot see, so a session that was killed leaves a
// record for the next one to clean up.

type workspaceLock struct {
	dir        *os.File
	ws         string
	recordPath string
}

const lockWait = 10 * time.Second

func lockWorkspace(ws, home string, stderr io.Writer) (*workspaceLock, error) {
	dir, err := os.Open(ws)
	if err != nil {
		return nil, fmt.Errorf("cannot open the workspace %s: %v", ws, errors.Unwrap(err))
	}
	sum := sha256.Sum256([]byte(ws))
	l := &workspaceLock{dir: dir, ws: ws, recordPath: filepath.Join(home, ".cache/claude-sandbox/stubs", hex.EncodeToString(sum[:8]))}
	if unix.Flock(int(dir.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		l.removeStubs(stderr)
	}
	// A shared lock is taken without blocking, retried for a while: a process
	// in a sandbox could hold an exclusive lock on the directory forever.
	deadline := time.Now().Add(lockWait)
	for unix.Flock(int(dir.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			dir.Close()
			return nil, fmt.Errorf("another process holds an exclusive lock on the workspace %s; find it with `fuser %s` and end it", ws, ws)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return l, nil
}

// createStubs records this session's stubs, then creates them. The record
// comes first, so that even a session killed at once leaves a trace. A stub
// another session created meanwhile is used as it is.
func (l *workspaceLock) createStubs(stubs []sandbox.Stub) error {
	if len(stubs) == 0 {
		return nil
	}
	var lines []string
	for _, s := range stubs {
		kind := "f"
		if s.Dir {
			kind = "d"
		}
		lines = append(lines, kind+" "+s.Path)
	}
	if err := os.MkdirAll(filepath.Dir(l.recordPath), 0o700); err != nil {
		return fmt.Errorf("cannot record stubs: %v", err)
	}
	f, err := os.OpenFile(l.recordPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("cannot record stubs: %v", err)
	}
	_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot record stubs in %s: %v", l.recordPath, err)
	}
	for _, s := range stubs {
		if s.Dir {
			err = os.Mkdir(s.Path, 0o755)
		} else {
			err = writeNew(s.Path, sandbox.StubContent(s.Path))
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot create %s to hold it read-only: %v", s.Path, errors.Unwrap(err))
		}
	}
	return nil
}

func writeNew(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// release removes the recorded stubs if no other session uses the
// workspace, then drops the lock.
func (l *workspaceLock) release(stderr io.Writer) {
	if unix.Flock(int(l.dir.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		l.removeStubs(stderr)
	}
	l.dir.Close()
}

// removeStubs removes recorded stubs that are still as the launcher made
// them. A stub someone has since filled is kept, and said so: nothing of the
// user's is deleted. Paths are walked from the workspace without following
// symlinks, so a link planted in a parent cannot redirect the removal.
func (l *workspaceLock) removeStubs(stderr io.Writer) {
	data, err := os.ReadFile(l.recordPath)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	// Deepest first, so a stub is removed before a stub directory above it.
	sort.Slice(lines, func(i, j int) bool { return len(lines[i]) > len(lines[j]) })
	for _, line := range lines {
		kind, path, ok := strings.Cut(line, " ")
		rel, inside := strings.CutPrefix(path, l.ws+"/")
		if !ok || !inside || rel == "" {
			continue
		}
		if err := removeStub(int(l.dir.Fd()), rel, kind == "d", sandbox.StubContent(path)); err != nil {
			fmt.Fprintf(stderr, "claude-sandbox: left %s: %v\n", path, err)
		}
	}
	os.Remove(l.recordPath)
}

var errFilled = errors.New("it is no longer an empty stub")

func removeStub(wsFD int, rel string, dir bool, content string) error {
	parts := strings.Split(rel, "/")
	parent := wsFD
	for _, part := range parts[:len(parts)-1] {
		fd, err := unix.Openat(parent, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if parent != wsFD {
			unix.Close(parent)
		}
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		if err != nil {
			return err
		}
		parent = fd
	}
	if parent != wsFD {
		defer unix.Close(parent)
	}
	name := parts[len(parts)-1]
	if dir {
		err := unix.Unlinkat(parent, name, unix.AT_REMOVEDIR) // only an empty directory goes
		switch {
		case err == nil, errors.Is(err, unix.ENOENT):
			return nil
		case errors.Is(err, unix.ENOTEMPTY), errors.Is(err, unix.EEXIST), errors.Is(err, unix.ENOTDIR):
			return errFilled
		}
		return err
	}
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	fi, err := f.Stat()
	buf := make([]byte, len(content)+1)
	n, _ := f.Read(buf)
	f.Close()
	if err != nil || !fi.Mode().IsRegular() || string(buf[:n]) != content {
		return errFilled
	}
	return unix.Unlinkat(parent, name, 0)
}
