package authproxy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/claude-sandbox/claude-sandbox/internal/atomicfile"
	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"github.com/claude-sandbox/claude-sandbox/internal/plainfile"
)

const keptName = "credentials.json"

// Keep moves a file login to where no sandbox sees it before the launch
// starts one (ADR 0039): a login at Claude Code's path goes into a new file
// in the kept login's directory, which every sandbox covers, and the file it
// was in is emptied, so a name a session made for it (a hard link in
// ~/.claude or the workspace) reads nothing; a kept login with another name
// is moved to a new file too, and the old one emptied. A login from a
// variable has no file: nothing to do.
func (c *Credential) Keep() error {
	s := c.st()
	if s.home == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, err := openKeeper(s.home)
	if err != nil {
		return fmt.Errorf("cannot keep Claude's login outside the sandbox: %w", err)
	}
	defer k.close()
	cf, err := k.take()
	if err != nil || cf == nil {
		return err
	}
	return coverable(filepath.Join(s.home, layout.CredentialsFile))
}

// coverable makes Claude Code's credentials file empty when it is missing
// while the launcher keeps a login: the sandbox covers the file only where
// it exists, and a login a session wrote at a missing path would be moved
// over the kept one by the next launch, which cannot tell it from the
// user's.
func coverable(path string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot make %s, which the sandbox covers while the launcher keeps the login: %w", path, err)
	}
	return unix.Close(fd)
}

// keeper holds the kept login's directory open and locked: the lock every
// launcher of the user takes to move or refresh the login. No sandbox can
// take it: the directory is covered in each.
type keeper struct {
	home string
	dir  int // the directory's descriptor
}

// openKeeper makes the kept login's directory when it is missing, opens it
// without following a link, and locks it.
func openKeeper(home string) (*keeper, error) {
	path := filepath.Join(home, layout.KeptLoginDir)
	if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	if err == nil && int(st.Uid) != os.Geteuid() {
		err = fmt.Errorf("%s belongs to uid %d, not to this user", path, st.Uid)
	}
	if err == nil {
		err = unix.Fchmod(fd, 0o700)
	}
	if err == nil {
		err = unix.Flock(fd, unix.LOCK_EX)
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &keeper{home: home, dir: fd}, nil
}

func (k *keeper) close() { unix.Close(k.dir) }

func (k *keeper) keptPath() string { return filepath.Join(k.home, layout.KeptLogin) }

// take returns the login to use, nil when there is none: the one at Claude
// Code's path when it holds one, saved to a new kept file and its own file
// emptied; else the kept one, moved to a new file when it has another name.
func (k *keeper) take() (*credFile, error) {
	path := filepath.Join(k.home, layout.CredentialsFile)
	cf, f, err := openLogin(unix.AT_FDCWD, path, path)
	if err != nil || cf != nil {
		return cf, k.moveFrom(cf, f, err)
	}
	cf, f, err = openLogin(k.dir, keptName, k.keptPath())
	if err != nil || cf == nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Nlink == 1 {
		f.Close()
		return cf, err
	}
	return cf, k.moveFrom(cf, f, nil)
}

// moveFrom saves the login read from f to a new kept file, then empties f:
// every name f has shows nothing of it from then on.
func (k *keeper) moveFrom(cf *credFile, f *os.File, err error) error {
	if err != nil {
		return err
	}
	defer f.Close()
	err = k.save(cf.raw)
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return fmt.Errorf("cannot move the login in %s to %s: %w", f.Name(), k.keptPath(), err)
	}
	return nil
}

// save writes data to a new file in the kept login's directory, made there
// and never seen by anything else, and renames it over the kept file: the
// kept file is one login at every moment, and no write reaches a file
// another name may reach.
func (k *keeper) save(data []byte) error {
	if err := atomicfile.WriteAt(k.dir, keptName, data, 0o600); err != nil {
		return err
	}
	return unix.Fsync(k.dir)
}

// openLogin opens the credentials file name (in dir) for reading and
// writing, without following a link and without waiting on a FIFO, and
// reads its login: nil when the file is missing, empty or holds none.
// shown is the file's path for messages.
func openLogin(dir int, name, shown string) (*credFile, *os.File, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read Claude's login: %w", &fs.PathError{Op: "open", Path: shown, Err: err})
	}
	f := os.NewFile(uintptr(fd), shown)
	cf, err := readLogin(f)
	if err != nil || cf == nil {
		f.Close()
		return nil, nil, err
	}
	return cf, f, nil
}

// readLogin reads the login in f as Find reads a credentials file.
func readLogin(f *os.File) (*credFile, error) {
	data, err := plainfile.ReadOpen(f, loginLimits)
	if err != nil {
		return nil, fmt.Errorf("cannot read Claude's login: %w", err)
	}
	return loginIn(f.Name(), data)
}

// Release puts the kept login back at Claude Code's path when that holds
// none: with credentials = inside the login enters the sandbox, as Claude
// Code alone would have it, and Claude Code reads it only there.
func Release(home string) error {
	k, err := openKeeper(home)
	if err != nil {
		return fmt.Errorf("cannot give Claude its login: %w", err)
	}
	defer k.close()
	path := filepath.Join(home, layout.CredentialsFile)
	cf, f, err := openLogin(unix.AT_FDCWD, path, path)
	if err != nil || cf != nil {
		if f != nil {
			f.Close()
		}
		return err
	}
	cf, f, err = openLogin(k.dir, keptName, k.keptPath())
	if err != nil || cf == nil {
		return err
	}
	f.Close()
	if err := unix.Renameat(k.dir, keptName, unix.AT_FDCWD, path); err != nil {
		return fmt.Errorf("cannot give Claude its login: %w", &os.LinkError{Op: "rename", Old: k.keptPath(), New: path, Err: err})
	}
	return nil
}
