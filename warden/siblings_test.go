package warden

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// listen binds a unix socket at path and returns its identity.
func listen(t *testing.T, path string) sockID {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	id, isSock, err := statSock(unix.AT_FDCWD, path, 0)
	if err != nil || !isSock {
		t.Fatalf("%s: %v, socket %v", path, err, isSock)
	}
	return id
}

func openDir(t *testing.T, dir string) int {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// The registry holds the sockets bound in the shared directory or below
// it, by identity; nothing else, and not another file at the same name.
func TestSiblingRegistry(t *testing.T) {
	tmp := t.TempDir()
	shared, registry, other := filepath.Join(tmp, "shared"), filepath.Join(tmp, "registry"), filepath.Join(tmp, "other")
	for _, d := range []string{shared, filepath.Join(shared, "a/b"), registry, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s, err := openSiblings(&Siblings{Shared: shared, Registry: registry})
	if err != nil {
		t.Fatal(err)
	}
	deep := listen(t, filepath.Join(shared, "a/b/control.sock"))
	top := listen(t, filepath.Join(shared, "top.sock"))
	outside := listen(t, filepath.Join(other, "x.sock"))
	s.record(openDir(t, filepath.Join(shared, "a/b")), deep)
	s.record(openDir(t, shared), top)
	s.record(openDir(t, other), outside)
	if !s.has(deep) || !s.has(top) {
		t.Errorf("sockets bound below the shared directory are not recorded")
	}
	if s.has(outside) {
		t.Errorf("a socket bound outside the shared directory is recorded")
	}
	// A socket placed there by anything but a warden: never recorded.
	host := listen(t, filepath.Join(shared, "host.sock"))
	if s.has(host) {
		t.Errorf("a socket no warden recorded is taken for a sibling's")
	}
	if !Registered(registry, filepath.Join(shared, "a/b/control.sock")) || Registered(registry, filepath.Join(shared, "host.sock")) {
		t.Errorf("Registered disagrees with the registry")
	}
	// A new socket at a recorded name is another file.
	os.Remove(filepath.Join(shared, "top.sock"))
	if again := listen(t, filepath.Join(shared, "top.sock")); s.has(again) {
		t.Errorf("a socket made again at a recorded name is taken for the recorded one")
	}
	var none *siblingSockets
	if none.has(deep) {
		t.Errorf("a warden without siblings finds one")
	}
}
