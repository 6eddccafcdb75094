package plainfile_test

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/plainfile"
)

var small = plainfile.Limits{Max: 16, Owner: plainfile.AnyOwner}

func TestReadsARegularFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("0123456789abcdef"), 0o600)
	got, err := plainfile.Read(p, plainfile.Limits{Max: 16, Owner: os.Getuid()})
	if err != nil || string(got) != "0123456789abcdef" {
		t.Fatalf("Read = %q, %v; want the file's 16 bytes", got, err)
	}
	if _, err := plainfile.Read(filepath.Join(dir, "missing"), small); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v; want fs.ErrNotExist", err)
	}
}

// Every kind but a regular file is refused, each with one line naming the
// file and what it is; a FIFO without a writer does not block the open.
func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sub := filepath.Join(dir, "dir")
	os.Mkdir(sub, 0o700)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, []byte("0123456789abcdefX"), 0o600)
	huge := filepath.Join(dir, "huge")
	f, _ := os.Create(huge)
	f.Truncate(1 << 40) // sparse: a terabyte that takes no disk
	f.Close()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("x"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	for _, c := range []struct{ path, why string }{
		{fifo, " is a FIFO, not a regular file"},
		{sock, " is not a regular file (a socket or a device)"},
		{"/dev/null", " is a character device, not a regular file"},
		{sub, " is a directory, not a regular file"},
		{big, " is larger than the 16 bytes the launcher reads of it"},
		{huge, " is larger than the 16 bytes the launcher reads of it"},
		{link, " is a symbolic link"},
	} {
		_, err := plainfile.Read(c.path, small)
		var pe *plainfile.Error
		if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.path+c.why) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Read(%s) = %v; want one line %q...", c.path, err, c.path+c.why)
		}
	}
	if _, err := plainfile.Read(sub, small); !plainfile.IsDir(err) {
		t.Errorf("a directory: %v; want IsDir", err)
	}
	if _, err := plainfile.Read(link, small); !plainfile.IsLink(err) {
		t.Errorf("a link: %v; want IsLink", err)
	}
	follow := small
	follow.FollowLinks = true
	if got, err := plainfile.Read(link, follow); err != nil || string(got) != "x" {
		t.Errorf("a link followed: %q, %v; want its target's content", got, err)
	}
	fifoLink := filepath.Join(dir, "fifo-link")
	os.Symlink(fifo, fifoLink)
	if _, err := plainfile.Read(fifoLink, follow); err == nil || !strings.Contains(err.Error(), "is a FIFO") {
		t.Errorf("a link to a FIFO, followed: %v; want the FIFO refused", err)
	}
}

func TestRefusesAnotherUsersFile(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("x"), 0o644)
	if err := os.Chown(p, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	_, err := plainfile.Read(p, plainfile.Limits{Max: 16, Owner: 0})
	if err == nil || !strings.Contains(err.Error(), "belongs to uid 4242, not to this user (uid 0)") {
		t.Errorf("another user's file: %v; want it refused", err)
	}
	if _, err := plainfile.Read(p, small); err != nil {
		t.Errorf("another user's file, any owner: %v", err)
	}
	// In a directory of that user's (a mount from the host), the file is
	// accepted with DirOwner; elsewhere it is not.
	own := plainfile.Limits{Max: 16, Owner: 0, DirOwner: true}
	_, err = plainfile.Read(p, own)
	if err == nil || !strings.Contains(err.Error(), "belongs to uid 4242, not to this user (uid 0); ") {
		t.Errorf("another user's file in root's directory, DirOwner: %v; want it refused", err)
	}
	if err := os.Chown(filepath.Dir(p), 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if _, err := plainfile.Read(p, own); err != nil {
		t.Errorf("a file of its directory's owner, DirOwner: %v", err)
	}
	if err := os.Chown(p, 4343, 4343); err != nil {
		t.Fatal(err)
	}
	_, err = plainfile.Read(p, own)
	if err == nil || !strings.Contains(err.Error(), "belongs to uid 4343, not to this user (uid 0) or its directory's owner (uid 4242); ") {
		t.Errorf("a third user's file, DirOwner: %v; want it refused naming both", err)
	}
}
