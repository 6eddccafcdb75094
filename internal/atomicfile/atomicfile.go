// Package atomicfile replaces a file so that a reader, or a run killed at
// any point, sees the old contents or the new, never half of them.
//
// The new contents go to a temporary file created in the same directory,
// through the directory's descriptor, with O_EXCL and O_NOFOLLOW (a link
// or file planted under the temporary name is never written through), get
// their mode, reach the disk (fsync), and are renamed over the old entry
// through the same descriptor. The rename replaces the entry itself, so a
// hard link to a file elsewhere is never written through either.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Write replaces path with data.
func Write(path string, data []byte, mode os.FileMode) error {
	return Copy(path, bytes.NewReader(data), mode)
}

// Copy replaces path with what src holds.
func Copy(path string, src io.Reader, mode os.FileMode) error {
	dir, err := unix.Open(filepath.Dir(path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: filepath.Dir(path), Err: err}
	}
	defer unix.Close(dir)
	if err := CopyAt(dir, filepath.Base(path), src, mode); err != nil {
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// WriteAt replaces the entry name of the open directory dir with data.
func WriteAt(dir int, name string, data []byte, mode os.FileMode) error {
	return CopyAt(dir, name, bytes.NewReader(data), mode)
}

// CopyAt replaces the entry name of the open directory dir with what src
// holds.
func CopyAt(dir int, name string, src io.Reader, mode os.FileMode) error {
	tmp, fd, err := createTemp(dir, name)
	if err != nil {
		return fmt.Errorf("creating a temporary file beside %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = io.Copy(f, src)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, name)
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
		return err
	}
	return nil
}

// createTemp creates a new file for the contents of name, readable by its
// owner only until its mode is set.
func createTemp(dir int, name string) (string, int, error) {
	for try := 0; ; try++ {
		tmp := fmt.Sprintf(".%s.tmp-%d", name, time.Now().UnixNano())
		fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) && try < 10 {
			continue
		}
		return tmp, fd, err
	}
}
