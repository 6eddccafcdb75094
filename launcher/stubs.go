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
		switch {
		case s.Writable:
			kind = "m"
		case s.Dir:
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
	var files []string
	for _, s := range stubs {
		if s.Dir {
			err = os.Mkdir(s.Path, 0o755)
		} else {
			err = writeNew(s.Path, sandbox.StubContent(s.Path))
			files = append(files, s.Path)
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("cannot create %s to hold it read-only: %v", s.Path, errors.Unwrap(err))
		}
	}
	return l.hideFromGit(files)
}

// excludeMark precedes each line the launcher adds to the repository's
// info/exclude; the line after it is a stub's path.
const excludeMark = "# claude-sandbox: a read-only stub of a running session (this and the next line go with it)"

// hideFromGit lists file stubs in the repository's info/exclude: git shows
// an untracked file (a directory stub it does not), and a `git add -A` in
// the session would commit one. Stubs inside the git directory need no
// line. A workspace whose .git is not a directory (a linked worktree) gets
// none: there the stubs show as untracked while the session runs.
func (l *workspaceLock) hideFromGit(files []string) error {
	gitDir, ok := l.repository()
	if !ok {
		return nil
	}
	var add []string
	for _, f := range files {
		if rel, ok := strings.CutPrefix(f, l.ws+"/"); ok && !strings.HasPrefix(rel, ".git/") {
			add = append(add, "/"+rel)
		}
	}
	if len(add) == 0 {
		return nil
	}
	return editExclude(gitDir, func(lines []string) []string {
		for _, a := range add {
			found := false
			for i := 0; i+1 < len(lines); i++ {
				found = found || (lines[i] == excludeMark && lines[i+1] == a)
			}
			if !found {
				lines = append(lines, excludeMark, a)
			}
		}
		return lines
	})
}

// unhideFromGit takes every line hideFromGit added out of info/exclude: it
// runs when no session uses the workspace, so no stub is left to hide.
func (l *workspaceLock) unhideFromGit() error {
	gitDir, ok := l.repository()
	if !ok {
		return nil
	}
	return editExclude(gitDir, func(lines []string) []string {
		var out []string
		for i := 0; i < len(lines); i++ {
			if lines[i] == excludeMark {
				i++
				continue
			}
			out = append(out, lines[i])
		}
		return out
	})
}

// repository returns the workspace's git directory when .git is one (with
// a HEAD: a stub of .git is not).
func (l *workspaceLock) repository() (string, bool) {
	gitDir := filepath.Join(l.ws, ".git")
	fi, err := os.Lstat(gitDir)
	if err != nil || !fi.IsDir() {
		return "", false
	}
	if fi, err := os.Lstat(filepath.Join(gitDir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return gitDir, true
}

// editExclude rewrites gitDir/info/exclude through edit, atomically, when
// edit changes it. Links are not followed: the file is the repository's own.
func editExclude(gitDir string, edit func([]string) []string) error {
	p := filepath.Join(gitDir, "info", "exclude")
	if fi, err := os.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file; the launcher lists its stubs there for git to ignore", p)
	}
	old, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot read %s: %v", p, errors.Unwrap(err))
	}
	var lines []string
	if text := strings.TrimSuffix(string(old), "\n"); text != "" {
		lines = strings.Split(text, "\n")
	}
	next := strings.Join(edit(lines), "\n")
	if next != "" {
		next += "\n"
	}
	if next == string(old) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %v", filepath.Dir(p), errors.Unwrap(err))
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".exclude.claude-sandbox-*")
	if err != nil {
		return fmt.Errorf("cannot update %s: %v", p, errors.Unwrap(err))
	}
	_, err = tmp.WriteString(next)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cannot update %s: %v", p, err)
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
		err := removeStub(int(l.dir.Fd()), rel, kind != "f", sandbox.StubContent(path))
		// A directory made on the way to a stub keeps quietly what the
		// session put in it (a project's commands, skills, agents).
		if err != nil && !(kind == "m" && errors.Is(err, errFilled)) {
			fmt.Fprintf(stderr, "claude-sandbox: left %s: %v\n", path, err)
		}
	}
	if err := l.unhideFromGit(); err != nil {
		fmt.Fprintf(stderr, "claude-sandbox: %v\n", err)
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
