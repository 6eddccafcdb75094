package warden

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The warden learns a task's umask once (knownTasks) and makes every file
// with the mode the kernel would give it: after the task's own umask call,
// a sibling thread's, one by a thread that unshared CLONE_FS, a child's, a
// task that took a dead one's TID, a thread that execs in place of its
// process's leader, and umask calls racing the warden's reads. A helper
// process installs the filter and makes the files; this test's warden
// carries them out.
func TestUmaskFollowsTheTask(t *testing.T) {
	if dir := os.Getenv("WARDEN_TEST_UMASK"); dir != "" {
		runtime.LockOSThread()
		os.Exit(umaskHelper(dir))
	}
	if dir := os.Getenv("WARDEN_TEST_UMASK_CHECK"); dir != "" {
		os.Exit(umaskChecks(dir))
	}
	if !onPidfs() {
		t.Skip("SKIPPING: no pidfds of threads on pidfs (Linux 6.9): the warden keeps no umask")
	}
	dir := t.TempDir()
	helper, fd := helperProcess(t, "TestUmaskFollowsTheTask", "WARDEN_TEST_UMASK="+dir)
	var out strings.Builder
	helper.Stdout, helper.Stderr = &out, &out
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	w := wardenOf(t, helper, fd)
	ended := serve(t, w)
	go placePIDs(fd)
	err := helper.Wait()
	ended()
	t.Log(out.String())
	if err != nil {
		t.Fatalf("the helper: %v", err)
	}
}

// placePIDs answers the helper's requests on fd, each a PID the next
// process made on the machine should have: it writes the one before to
// ns_last_pid, which needs capabilities the helper has not, and answers
// with the error or "ok".
func placePIDs(fd int) {
	buf := make([]byte, 32)
	for {
		n, err := unix.Read(fd, buf)
		if err != nil || n == 0 {
			return
		}
		pid, _ := strconv.Atoi(string(buf[:n]))
		answer := "ok"
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
			answer = err.Error()
		}
		if _, err := unix.Write(fd, []byte(answer)); err != nil {
			return
		}
	}
}

// umaskHelper installs the filter, which holds for the thread that
// installs it and what it makes, and execs this test again to run
// umaskChecks, every thread of which has the filter.
func umaskHelper(dir string) int {
	unix.Umask(0o022)
	if code := installUncapped(); code != 0 {
		return code
	}
	// unix.Exec keeps an environment's first of two same names.
	env := slices.DeleteFunc(os.Environ(), func(v string) bool { return strings.HasPrefix(v, "WARDEN_TEST_UMASK=") })
	env = append(env, "WARDEN_TEST_UMASK_CHECK="+dir)
	err := unix.Exec(os.Args[0], []string{os.Args[0], "-test.run=^TestUmaskFollowsTheTask$"}, env)
	fmt.Printf("exec: %v\n", err)
	return 8
}

// umaskChecks makes files in dir, from threads and children; it reports
// each file whose mode is not the kernel's, and returns the helper's exit
// status.
func umaskChecks(dir string) int {
	h := &umaskCheck{dir: dir}
	h.expect("first", "", 0o644)
	t1, t2, t3 := newThread(), newThread(), newThread()
	t1.run(func() { h.expect("own-022", "", 0o644) })
	t1.run(func() { h.expect("own-077", "077", 0o600) })
	// Threads share one umask (CLONE_FS): a sibling's call changes it.
	t2.run(func() { unix.Umask(0o027) })
	t1.run(func() { h.expect("sibling", "", 0o640) })
	// unshare(CLONE_FS) gives a thread a umask of its own.
	t3.run(func() {
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			h.fail("unshare(CLONE_FS): %v", err)
		}
		h.expect("unshared", "000", 0o666)
	})
	t1.run(func() { h.expect("unshared-sibling", "", 0o640) })
	// A child starts with its parent's umask; its own call is its own.
	h.shell("child", ": > "+h.path("child"), 0o640)
	h.shell("child-own", "umask 002 && : > "+h.path("child-own"), 0o664)
	t1.run(func() { h.expect("child-parent", "", 0o640) })
	h.reusedTID()
	h.execInPlaceOfLeader()
	t1.run(func() { h.racing(t2) })
	if h.failed.Load() {
		return 1
	}
	return 0
}

type umaskCheck struct {
	dir    string
	n      atomic.Int64
	failed atomic.Bool
}

func (h *umaskCheck) fail(format string, args ...any) {
	fmt.Printf(format+"\n", args...)
	h.failed.Store(true)
}

func (h *umaskCheck) path(name string) string { return filepath.Join(h.dir, name) }

// expect sets the calling thread's umask to mask (an octal number; none
// keeps it), makes a file of mode 0666 named name and compares its mode
// with want.
func (h *umaskCheck) expect(name, mask string, want uint32) {
	if mask != "" {
		m, _ := strconv.ParseUint(mask, 8, 32)
		unix.Umask(int(m))
	}
	got, err := makeFile(h.path(name))
	if err != nil {
		h.fail("%s: %v", name, err)
	} else if got != want {
		h.fail("%s: made with mode %o, want %o", name, got, want)
	}
}

// makeFile makes path with mode 0666 and returns the mode it got.
func makeFile(path string) (uint32, error) {
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Mode & 0o777, nil
}

// shell runs script in sh, a process of one thread, and compares the mode
// of the file it made, name, with want.
func (h *umaskCheck) shell(name, script string, want uint32) {
	c := exec.Command("sh", "-c", script)
	c.Stdout, c.Stderr = os.Stdout, os.Stdout
	if err := c.Run(); err != nil {
		h.fail("%s: sh: %v", name, err)
		return
	}
	h.mode(name, want)
}

func (h *umaskCheck) mode(name string, want uint32) {
	var st unix.Stat_t
	if err := unix.Stat(h.path(name), &st); err != nil {
		h.fail("%s: %v", name, err)
	} else if st.Mode&0o777 != want {
		h.fail("%s: made with mode %o, want %o", name, st.Mode&0o777, want)
	}
}

// reusedTID: a process sets its umask to 022 and makes a file, and exits;
// a process that then takes its PID, with its parent's umask 027, makes
// one with 027. The test writes ns_last_pid to put the second at the
// first's PID (placePIDs, over descriptor 3), which another process of
// the machine may take first, for a moment or for good: tried again, with
// another first process after 10 tries. Without the capability to write
// it, nothing is shown.
func (h *umaskCheck) reusedTID() {
	for round := range 20 {
		first := fmt.Sprintf("reused-first-%d", round)
		c := exec.Command("sh", "-c", "umask 022 && : > "+h.path(first))
		if err := c.Run(); err != nil {
			h.fail("%s: sh: %v", first, err)
			return
		}
		h.mode(first, 0o644)
		pid := c.Process.Pid
		for range 10 {
			if answer := placePID(pid); answer != "ok" {
				fmt.Printf("a reused TID: not shown, ns_last_pid: %s\n", answer)
				return
			}
			second := exec.Command("sh", "-c", fmt.Sprintf("[ $$ = %d ] && : > %s", pid, h.path("reused-second")))
			if err := second.Start(); err != nil {
				h.fail("reused-second: %v", err)
				return
			}
			_ = second.Wait() // fails unless the PID was the first's
			if second.Process.Pid == pid {
				h.mode("reused-second", 0o640)
				fmt.Printf("a reused TID: %d\n", pid)
				return
			}
		}
	}
	h.fail("reused-second: no first process's PID could be taken again in 20 rounds")
}

// placePID asks the test to make pid the next PID. It waits for the
// answer without letting the Go runtime know (RawSyscall): told of a
// blocking call, it may start a thread, which would take the PID.
func placePID(pid int) string {
	if _, err := unix.Write(3, []byte(strconv.Itoa(pid))); err != nil {
		return err.Error()
	}
	buf := make([]byte, 256)
	n, _, errno := unix.RawSyscall(unix.SYS_READ, 3, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if errno != 0 {
		return errno.Error()
	}
	return string(buf[:n])
}

// execInPlaceOfLeader runs this test binary as a process whose thread,
// not its leader, unshares CLONE_FS and sets umask 077 while the leader
// makes a file with the process's 027, then execs sh, which takes the
// leader's TID and makes a file with 077 (execLeaderChild).
func (h *umaskCheck) execInPlaceOfLeader() {
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), "WARDEN_TEST_UMASK_CHECK=", "WARDEN_TEST_UMASK_EXEC="+h.dir)
	c.Stdout, c.Stderr = os.Stdout, os.Stdout
	if err := c.Run(); err != nil {
		h.fail("exec in place of the leader: %v", err)
		return
	}
	h.mode("leader", 0o640)
	h.mode("after-exec", 0o600)
}

func init() {
	if dir := os.Getenv("WARDEN_TEST_UMASK_EXEC"); dir != "" {
		execLeaderChild(dir)
	}
}

// execLeaderChild runs in init, on the process's leader, where Go keeps
// the main goroutine until main starts.
func execLeaderChild(dir string) {
	ready, goExec := make(chan error), make(chan struct{})
	go func() {
		runtime.LockOSThread() // not the leader: init holds that
		err := unix.Unshare(unix.CLONE_FS)
		unix.Umask(0o077)
		ready <- err
		<-goExec
		sh, err := exec.LookPath("sh")
		if err == nil {
			err = unix.Exec(sh, []string{"sh", "-c", ": > " + filepath.Join(dir, "after-exec")}, os.Environ())
		}
		fmt.Printf("exec sh: %v\n", err)
		os.Exit(1)
	}()
	if err := <-ready; err != nil {
		fmt.Printf("unshare(CLONE_FS): %v\n", err)
		os.Exit(1)
	}
	if _, err := makeFile(filepath.Join(dir, "leader")); err != nil {
		fmt.Printf("leader: %v\n", err)
		os.Exit(1)
	}
	close(goExec)
	select {}
}

// racing makes files on this thread while other sets the umask again and
// again: a file is made with a mask set no earlier than the last call that
// returned before the file's open began, and no later than the one after
// the last that returned before it ended.
func (h *umaskCheck) racing(other thread) {
	const rounds = 3000
	masks := func(i int64) uint32 { return uint32(i % 64) } // 00 to 077, each call another
	var done atomic.Int64
	finished := make(chan struct{})
	go other.run(func() {
		for i := int64(1); i <= rounds; i++ {
			unix.Umask(int(masks(i)))
			done.Store(i)
		}
		close(finished)
	})
	for n := 0; ; n++ {
		select {
		case <-finished:
			return
		default:
		}
		before := done.Load()
		got, err := makeFile(h.path(fmt.Sprintf("race-%d", n)))
		after := done.Load()
		if err != nil {
			h.fail("race-%d: %v", n, err)
			return
		}
		if before == 0 {
			continue
		}
		ok := false
		for i := before; i <= after+1; i++ {
			ok = ok || got == 0o666&^masks(i)
		}
		if !ok {
			h.fail("race-%d: made with mode %o, want the mask of calls %d to %d", n, got, before, after+1)
			return
		}
	}
}

// A thread is one locked OS thread, not the process's leader, that runs
// functions one after another.
type thread chan func()

func newThread() thread {
	th := make(thread)
	started := make(chan struct{})
	go th.serve(started)
	<-started
	return th
}

func (th thread) serve(started chan struct{}) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// The leader stays here, locked and idle; another thread serves.
		go th.serve(started)
		select {}
	}
	close(started)
	for f := range th {
		f()
	}
}

// run runs f on the thread and waits for it.
func (th thread) run(f func()) {
	done := make(chan struct{})
	th <- func() { f(); close(done) }
	<-done
}

// What a carried-out call pays for its task's umask: the status file read
// at every call, against the entry learned once (the pidfd that checks it
// is still the task). The task is a thread other than the leader, whose
// umask a process of several threads keeps.
//
//	go test -run '^$' -bench TaskUmask ./warden/
func BenchmarkTaskUmask(b *testing.B) {
	th := newThread()
	var self int
	th.run(func() { self = unix.Gettid() })
	umask := func(b *testing.B, k *knownTasks) {
		for b.Loop() {
			if _, err := (&task{tid: self, known: k}).umask(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("status-file", func(b *testing.B) { umask(b, nil) })
	b.Run("known", func(b *testing.B) {
		if !onPidfs() {
			b.Skip("SKIPPING: no pidfds of threads on pidfs: nothing is kept")
		}
		umask(b, newKnownTasks())
	})
}

// What a session can make the warden hold is bounded: past maxPending
// umask calls pending at once nothing more is kept for the session, and a
// full table of tasks makes room for a new one. The TIDs are above any
// pid_max, so none is a task.
func TestKnownTasksBounded(t *testing.T) {
	const noTask = 1 << 23
	k := newKnownTasks()
	for i := range maxPending + 1 {
		k.umaskCalled(noTask+i, 0o022)
	}
	if len(k.pending) > maxPending || !k.overflowed {
		t.Errorf("%d umask calls pending, overflowed %v; want at most %d, and overflowed", len(k.pending), k.overflowed, maxPending)
	}
	th := newThread()
	th.run(func() {
		if _, _, err := k.status(&task{tid: unix.Gettid()}, true); err != nil {
			t.Error(err)
		}
	})
	if len(k.byTID) != 0 {
		t.Errorf("%d tasks kept after too many umask calls pending; want none", len(k.byTID))
	}
	k = newKnownTasks()
	for i := range maxKnown + 10 {
		k.keep(noTask+i, knownTask{})
	}
	if len(k.byTID) != maxKnown {
		t.Errorf("%d tasks kept; want %d", len(k.byTID), maxKnown)
	}
}
