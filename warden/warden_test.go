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
		os.Exit(installAndSend())
	}
	helper, fd := helperProcess(t, "TestServeEndsWithTheLastTask", "WARDEN_TEST_INSTALL=1")
	if out, err := helper.CombinedOutput(); err != nil {
		t.Fatalf("the helper that installs the filter: %v\n%s", err, out)
	}
	w := wardenOf(t, helper, fd)
	if !w.ended() {
		t.Error("ended is false for a filter whose one task has exited")
	}
	serve(t, w)()
}

// Totals count every call a warden carries out, and the time until its
// answer: a helper process installs the filter, hands over its listener,
// and makes a directory, which this test's warden makes for it.
func TestTotalsCountEachCall(t *testing.T) {
	if dir := os.Getenv("WARDEN_TEST_MKDIR"); dir != "" {
		runtime.LockOSThread()
		if code := installUncapped(); code != 0 {
			os.Exit(code)
		}
		if err := unix.Mkdir(dir, 0o755); err != nil {
			os.Stderr.WriteString("mkdir: " + err.Error() + "\n")
			os.Exit(5)
		}
		os.Exit(0)
	}
	dir := t.TempDir() + "/made"
	helper, fd := helperProcess(t, "TestTotalsCountEachCall", "WARDEN_TEST_MKDIR="+dir)
	var stderr strings.Builder
	helper.Stderr = &stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	w := wardenOf(t, helper, fd)
	calls, busy := Totals()
	ended := serve(t, w)
	if err := helper.Wait(); err != nil {
		t.Fatalf("the helper that makes a directory through the warden: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	// A worker counts a call after answering it: read the totals once
	// every worker has ended.
	ended()
	after, busyAfter := Totals()
	if after-calls != 1 || busyAfter <= busy {
		t.Errorf("Totals went from %d calls, %v to %d, %v; want one call more, and more time", calls, busy, after, busyAfter)
	}
}

// installAndSend, in a test's helper process, puts the warden's filter on
// the calling thread (which the caller has locked) and sends its listener
// over descriptor 3, as init does; it returns the helper's exit status.
func installAndSend() int {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 2
	}
	l, err := Install()
	if err != nil {
		return 3
	}
	// This thread's sendmsg would wait for a warden: another sends.
	sent := make(chan error)
	go func() { sent <- unix.Sendmsg(3, []byte{'l'}, unix.UnixRights(l), nil, 0) }()
	if err := <-sent; err != nil {
		return 4
	}
	// As init does: the warden's copy is then the only one, and once it
	// is closed the kernel fails every call (ENOSYS) instead of holding it.
	unix.Close(l)
	return 0
}

// installUncapped is installAndSend without any capability first, as in
// the sandbox: the warden, which drops its own, could not open
// /proc/PID/root of a task that has some.
func installUncapped() int {
	var caps [2]unix.CapUserData
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &caps[0]); err != nil {
		return 6
	}
	return installAndSend()
}

// helperProcess is this test binary run again as the helper of test, with
// env added and one end of a socket pair as its descriptor 3 (to close once
// it has started); it returns the command, not started, and the other end.
// It skips where the kernel lacks what the warden needs.
func helperProcess(t *testing.T, test, env string) (*exec.Cmd, int) {
	t.Helper()
	if err := KernelSupports(); err != nil {
		t.Skipf("SKIPPING: %v", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]) })
	helper := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	helper.Env = append(os.Environ(), env)
	helper.ExtraFiles = []*os.File{os.NewFile(uintptr(fds[1]), "helper")}
	return helper, fds[0]
}

// serve starts w serving; the function it returns waits until Serve has
// returned, as it must once no task uses the filter, and fails the test
// after 30 seconds.
func serve(t *testing.T, w *Warden) (ended func()) {
	served := make(chan struct{})
	go func() {
		w.Serve()
		close(served)
	}()
	return func() {
		t.Helper()
		select {
		case <-served:
		case <-time.After(30 * time.Second):
			t.Fatal("the warden still serves a filter no task uses")
		}
	}
}

// wardenOf is a warden on the listener that helper, started, sends on fd.
func wardenOf(t *testing.T, helper *exec.Cmd, fd int) *Warden {
	t.Helper()
	helper.ExtraFiles[0].Close()
	l := receiveListener(t, fd)
	t.Cleanup(func() { unix.Close(l) })
	w, err := New(l, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// receiveListener waits for the listener a helper process sends on fd.
func receiveListener(t *testing.T, fd int) int {
	t.Helper()
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(fd, make([]byte, 1), oob, 0)
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
	return ls[0]
}
