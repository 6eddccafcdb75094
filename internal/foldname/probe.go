package foldname

import (
	"fmt"
	"os"
	"path/filepath"
	"unicode"

	"golang.org/x/sys/unix"
)

// fsCasefoldFL is the inode flag of a directory that folds case (ext4 and
// f2fs, set with chattr +F).
const fsCasefoldFL = 0x40000000

// Folds reports whether the file system of dir finds its names in another
// case, and how it found out: the directory's casefold flag, or an entry
// looked up with its case swapped, which on such a file system is the
// same file. It makes nothing. A directory with no entry that has a
// letter cannot tell; it is reported as not folding, and says so.
func Folds(dir string) (bool, string) {
	if fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		flags, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS)
		unix.Close(fd)
		if err == nil && flags&fsCasefoldFL != 0 {
			return true, "the directory has the casefold flag (chattr +F)"
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Sprintf("cannot tell: %v", err)
	}
	for _, e := range entries {
		swapped := swapCase(e.Name())
		if swapped == e.Name() {
			continue
		}
		var st, sst unix.Stat_t
		if unix.Lstat(filepath.Join(dir, e.Name()), &st) != nil {
			continue
		}
		err := unix.Lstat(filepath.Join(dir, swapped), &sst)
		if err == nil && st.Dev == sst.Dev && st.Ino == sst.Ino {
			return true, fmt.Sprintf("%s is found as %s", e.Name(), swapped)
		}
		return false, fmt.Sprintf("%s is not found as %s", e.Name(), swapped)
	}
	return false, "cannot tell: no entry has a letter to look up in another case"
}

func swapCase(s string) string {
	r := []rune(s)
	for i, c := range r {
		if unicode.IsUpper(c) {
			r[i] = unicode.ToLower(c)
		} else {
			r[i] = unicode.ToUpper(c)
		}
	}
	return string(r)
}
