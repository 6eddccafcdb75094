package warden

import (
	"encoding/binary"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTranslateControl rewrites control messages as the warden does for a
// task, this process being the task: an SCM_RIGHTS descriptor becomes the
// warden's own descriptor of the same file, and a message the kernel would
// refuse from the task, or could not check against it, is refused.
func TestTranslateControl(t *testing.T) {
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		t.Skipf("pidfd_open: %v", err)
	}
	defer unix.Close(pidfd)
	var pipe [2]int
	if err := unix.Pipe2(pipe[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pipe[0])
	defer unix.Close(pipe[1])
	w := &Warden{}
	s := &socket{domain: unix.AF_UNIX, pidfd: pidfd}

	rights := unix.UnixRights(pipe[0], pipe[1])
	out, done, errno := w.translateControl(s, rights)
	if errno != 0 {
		t.Fatalf("SCM_RIGHTS: %v", errno)
	}
	msgs, err := unix.ParseSocketControlMessage(out)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("the rewritten control: %d messages, %v", len(msgs), err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 2 {
		t.Fatalf("the rewritten rights: %v, %v", fds, err)
	}
	for i, fd := range fds {
		if fd == pipe[i] || !sameFile(t, fd, pipe[i]) {
			t.Errorf("descriptor %d became %d: want another descriptor of the same pipe", pipe[i], fd)
		}
	}
	done()
	for _, fd := range fds {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
			t.Errorf("descriptor %d still open after done: %v", fd, err)
		}
	}

	creds := unix.UnixCredentials(&unix.Ucred{Pid: int32(os.Getpid())})
	short := append([]byte{}, rights...)
	binary.NativeEndian.PutUint64(short, unix.SizeofCmsghdr-1)
	long := append([]byte{}, rights...)
	binary.NativeEndian.PutUint64(long, uint64(len(rights)+1))
	for _, tc := range []struct {
		name    string
		control []byte
		want    unix.Errno
	}{
		{"SCM_CREDENTIALS on a unix socket", creds, unix.EPERM},
		{"SCM_RIGHTS after SCM_CREDENTIALS", append(append([]byte{}, creds...), rights...), unix.EPERM},
		{"a descriptor the task does not have", unix.UnixRights(1 << 20), unix.EBADF},
		{"a header shorter than itself", short, unix.EINVAL},
		{"a header past the buffer", long, unix.EINVAL},
	} {
		if _, _, errno := w.translateControl(s, tc.control); errno != tc.want {
			t.Errorf("%s: translateControl answered %v, want %v", tc.name, errno, tc.want)
		}
	}
}

func sameFile(t *testing.T, a, b int) bool {
	t.Helper()
	var sa, sb unix.Stat_t
	if unix.Fstat(a, &sa) != nil || unix.Fstat(b, &sb) != nil {
		t.Fatalf("fstat %d, %d", a, b)
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
