package warden

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// The kernel says which file a socket is bound to, both ways the warden
// asks: the socket itself (SIOCUNIXFILE) and the kernel's table
// (sock_diag); a socket bound elsewhere, or not at all, is bound to no
// file the warden checked.
func TestBoundTo(t *testing.T) {
	dir := t.TempDir()
	bind := func(name string) (int, unix.Stat_t) {
		t.Helper()
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		var st unix.Stat_t
		if name != "" {
			path := filepath.Join(dir, name)
			if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
				t.Fatal(err)
			}
			if err := unix.Lstat(path, &st); err != nil {
				t.Fatal(err)
			}
		}
		return fd, st
	}
	a, aFile := bind("a.sock")
	b, bFile := bind("b.sock")
	unbound, _ := bind("")
	var d sockDiag
	for _, c := range []struct {
		name string
		sock int
		file unix.Stat_t
		want bool
	}{
		{"a at its file", a, aFile, true},
		{"b at its file", b, bFile, true},
		{"a at b's file", a, bFile, false},
		{"an unbound socket", unbound, aFile, false},
	} {
		if got := d.boundTo(c.sock, c.file); got != c.want {
			t.Errorf("%s: boundTo = %v, want %v", c.name, got, c.want)
		}
	}
	// The kernel's table alone, which the warden asks where it may not ask
	// the socket (the container's network namespace, as a user).
	var s unix.Stat_t
	if err := unix.Fstat(a, &s); err != nil {
		t.Fatal(err)
	}
	dev, ino, err := d.vfs(uint32(s.Ino))
	if err != nil {
		t.Fatalf("sock_diag: %v", err)
	}
	if ino != uint32(aFile.Ino) || dev>>20 != unix.Major(aFile.Dev) || dev&(1<<20-1) != unix.Minor(aFile.Dev) {
		t.Errorf("sock_diag says a is bound to %d:%d inode %d; its file is %d:%d inode %d", dev>>20, dev&(1<<20-1), ino, unix.Major(aFile.Dev), unix.Minor(aFile.Dev), aFile.Ino)
	}
	if err := unix.Fstat(unbound, &s); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.vfs(uint32(s.Ino)); err == nil {
		t.Error("sock_diag names a file for an unbound socket")
	}
}
