package testscripts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/claude-sandbox/claude-sandbox/internal/layout"
	"golang.org/x/sys/unix"
)

// Probes of the calls that create names, which the warden carries out.
func init() {
	for name, p := range nameProbes {
		probes[name] = p
	}
}

var nameProbes = map[string]func(arg string) error{
	// symlink TARGET:LINK: make a symbolic link.
	"symlink": func(arg string) error {
		target, link, _ := strings.Cut(arg, ":")
		return os.Symlink(target, link)
	},
	// link OLD:NEW: make a hard link.
	"link": func(arg string) error {
		from, to, _ := strings.Cut(arg, ":")
		return os.Link(from, to)
	},
	// exchange A:B: swap two names (renameat2 RENAME_EXCHANGE).
	"exchange": func(arg string) error {
		a, b, _ := strings.Cut(arg, ":")
		return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	},
	// mkfifo PATH: make a FIFO.
	"mkfifo": func(path string) error { return unix.Mkfifo(path, 0o644) },
	// create-at DIR:NAME: create NAME relative to a descriptor of DIR.
	"create-at": func(arg string) error {
		dir, name, _ := strings.Cut(arg, ":")
		d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		defer unix.Close(d)
		fd, err := unix.Openat(d, name, unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, 0o644)
		if err == nil {
			unix.Close(fd)
		}
		return err
	},
	// tmpfile-link DIR:NAME: write an unnamed file in DIR (O_TMPFILE) and
	// give it NAME through /proc/self/fd, as unprivileged programs do.
	"tmpfile-link": func(arg string) error {
		dir, name, _ := strings.Cut(arg, ":")
		fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if _, err := unix.Write(fd, []byte("tmpfile\n")); err != nil {
			return err
		}
		return unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, filepath.Join(dir, name), unix.AT_SYMLINK_FOLLOW)
	},
	// openat2 PATH: create a file with openat2, which the sandbox refuses as
	// an older kernel would.
	"openat2": func(path string) error {
		fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY, Mode: 0o644})
		if err == nil {
			unix.Close(fd)
		}
		return err
	},
	// race-create DIR: try, thousands of times, to create DIR/.git while
	// another thread flips the path in memory between an allowed name and
	// ".git" during the call. Succeeds (exit 0) only if a .git appeared
	// that is not the warden's link into the git store (ADR 0034).
	"race-create": func(dir string) error {
		allowed := []byte(filepath.Join(dir, "ok-name") + "\x00")
		refused := []byte(filepath.Join(dir, ".git") + "\x00\x00\x00\x00\x00\x00\x00")
		buf := make([]byte, max(len(allowed), len(refused)))
		copy(buf, allowed)
		var stop atomic.Bool
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; !stop.Load(); i++ {
				if i%2 == 0 {
					copy(buf, refused)
				} else {
					copy(buf, allowed)
				}
			}
		}()
		cwd := unix.AT_FDCWD
		for range 20000 {
			fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(&buf[0])), unix.O_CREAT|unix.O_WRONLY, 0o644, 0, 0)
			if errno == 0 {
				unix.Close(int(fd))
			}
		}
		stop.Store(true)
		<-done
		dotGit := filepath.Join(dir, ".git")
		if _, err := os.Lstat(dotGit); err != nil {
			return fmt.Errorf("%s never appeared", dotGit)
		}
		if target, err := os.Readlink(dotGit); err == nil && strings.HasPrefix(target, layout.InsideGitStore+"/") {
			return fmt.Errorf("%s is a link into the git store", dotGit)
		}
		fmt.Println("race-create: .git was created")
		return nil
	},
}
