package warden

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Once no task uses the filter, the kernel answers every receive at once:
// the workers stop instead of spinning until the launcher exits, and Serve
// returns. The filter's one task is a helper process (this test, run again)
// that installs it, hands over its listener and exits.
func TestServeEndsWithTheLastTask(t *testing.T) {
	if os.Getenv("WARDEN_TEST_INSTALL") == "1" {
		runtime.LockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			os.Exit(2)
		}
		l, err := Install()
		if err != nil {
			os.Exit(3)
		}
		// This thread's sendmsg would wait for a warden: another sends.
		sent := make(chan error)
		go func() { sent <- unix.Sendmsg(3, []byte{'l'}, unix.UnixRights(l), nil, 0) }()
		if err := <-sent; err != nil {
			os.Exit(4)
		}
		os.Exit(0)
	}
	if err := KernelSupports(); err != nil {
		t.Skip(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	child := os.NewFile(uintptr(fds[1]), "helper")
	helper := exec.Command(os.Args[0], "-test.run=^TestServeEndsWithTheLastTask$")
	helper.Env = append(os.Environ(), "WARDEN_TEST_INSTALL=1")
	helper.ExtraFiles = []*os.File{child}
	if out, err := helper.CombinedOutput(); err != nil {
		t.Fatalf("the helper that installs the filter: %v\n%s", err, out)
	}
	child.Close()
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(fds[0], make([]byte, 1), oob, 0)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		t.Fatalf("no listener came: %v", err)
	}
	ls, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(ls) != 1 {
		t.Fatalf("no listener came: %v", err)
	}
	l := ls[0]
	defer unix.Close(l)
	w, err := New(l, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	if !w.ended() {
		t.Error("ended is false for a filter whose one task has exited")
	}
	served := make(chan struct{})
	go func() {
		w.Serve()
		close(served)
	}()
	select {
	case <-served:
	case <-time.After(30 * time.Second):
		t.Fatal("the warden still serves a filter no task uses")
	}
}

// Totals count every call a warden carries out, and the time until its
// answer: a helper process installs the filter, hands over its listener,
// and makes a directory, which this test's warden makes for it.
func TestTotalsCountEachCall(t *testing.T) {
	if dir := os.Getenv("WARDEN_TEST_MKDIR"); dir != "" {
		runtime.LockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			os.Exit(2)
		}
		// No capabilities, as in the sandbox: the warden, which drops its
		// own, could not open /proc/PID/root of a task that has some.
		var caps [2]unix.CapUserData
		if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &caps[0]); err != nil {
			os.Exit(6)
		}
		l, err := Install()
		if err != nil {
			os.Exit(3)
		}
		sent := make(chan error)
		go func() { sent <- unix.Sendmsg(3, []byte{'l'}, unix.UnixRights(l), nil, 0) }()
		if err := <-sent; err != nil {
			os.Exit(4)
		}
		if err := unix.Mkdir(dir, 0o755); err != nil {
			os.Stderr.WriteString("mkdir: " + err.Error() + "\n")
			os.Exit(5)
		}
		os.Exit(0)
	}
	if err := KernelSupports(); err != nil {
		t.Skip(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	dir := t.TempDir() + "/made"
	child := os.NewFile(uintptr(fds[1]), "helper")
	helper := exec.Command(os.Args[0], "-test.run=^TestTotalsCountEachCall$")
	helper.Env = append(os.Environ(), "WARDEN_TEST_MKDIR="+dir)
	helper.ExtraFiles = []*os.File{child}
	var stderr strings.Builder
	helper.Stderr = &stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	child.Close()
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(fds[0], make([]byte, 1), oob, 0)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		t.Fatalf("no listener came: %v", err)
	}
	ls, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(ls) != 1 {
		t.Fatalf("no listener came: %v", err)
	}
	defer unix.Close(ls[0])
	w, err := New(ls[0], Rules{})
	if err != nil {
		t.Fatal(err)
	}
	calls, busy := Totals()
	go w.Serve()
	if err := helper.Wait(); err != nil {
		t.Fatalf("the helper that makes a directory through the warden: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	after, busyAfter := Totals()
	if after-calls != 1 || busyAfter <= busy {
		t.Errorf("Totals went from %d calls, %v to %d, %v; want one call more, and more time", calls, busy, after, busyAfter)
	}
}
