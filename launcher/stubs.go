package launcher

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A protected path that is missing at launch is held by an empty read-only
// stub that bwrap creates in the workspace. Stubs are removed when the last
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

// record appends this session's stubs to the user's record before bwrap
// creates them, so that even a killed session leaves a trace.
func (l *workspaceLock) record(stubs []string) error {
	if len(stubs) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(l.recordPath), 0o700); err != nil {
		return fmt.Errorf("cannot record stubs: %v", err)
	}
	f, err := os.OpenFile(l.recordPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("cannot record stubs: %v", err)
	}
	_, err = f.WriteString(strings.Join(stubs, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot record stubs in %s: %v", l.recordPath, err)
	}
	return nil
}

// release removes the recorded stubs if no other session uses the
// workspace, then drops the lock.
func (l *workspaceLock) release(stderr io.Writer) {
	if unix.Flock(int(l.dir.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		l.removeStubs(stderr)
	}
	l.dir.Close()
}

// removeStubs removes recorded stubs that are still empty. A stub someone
// has since filled is kept, and said so: nothing of the user's is deleted.
func (l *workspaceLock) removeStubs(stderr io.Writer) {
	f, err := os.Open(l.recordPath)
	if err != nil {
		return
	}
	var paths []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		paths = append(paths, sc.Text())
	}
	f.Close()
	// Deepest first, so a stub directory's parent is tried after it.
	for i := len(paths) - 1; i >= 0; i-- {
		p := paths[i]
		if !strings.HasPrefix(p, l.ws+"/") {
			continue
		}
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			fmt.Fprintf(stderr, "claude-sandbox: left %s: %v\n", p, err)
		case fi.IsDir():
			if err := unix.Rmdir(p); err != nil && !errors.Is(err, unix.ENOENT) {
				fmt.Fprintf(stderr, "claude-sandbox: left %s: it is no longer an empty stub\n", p)
			}
		case fi.Mode().IsRegular() && fi.Size() == 0:
			os.Remove(p)
		default:
			fmt.Fprintf(stderr, "claude-sandbox: left %s: it is no longer an empty stub\n", p)
		}
	}
	os.Remove(l.recordPath)
}
