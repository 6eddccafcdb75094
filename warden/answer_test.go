package warden

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Every descriptor the warden hands a task is the file the task asked for,
// however often signals reach the warden's threads and the task's own: a
// helper process installs the filter and starts a stressing process under
// it (filters are inherited), whose threads make files as fast as they can
// and compare each descriptor they get with the name's own stat. Meanwhile
// this process's goroutines allocate (the collector's preemption signals)
// and its threads are sent signals without pause, as a launcher's are by
// the terminal, its children and the Go runtime. An answer lost in the
// descriptor hand-over gives the task a success with another of its
// descriptors (ADR 0029): the stressing process counts each one.
func TestEveryAnswerReachesItsTask(t *testing.T) {
	if os.Getenv("WARDEN_TEST_STRESS") == "1" {
		os.Exit(stressNames(os.Args[len(os.Args)-1]))
	}
	if os.Getenv("WARDEN_TEST_STRESS_HELPER") == "1" {
		runtime.LockOSThread()
		if code := installUncapped(); code != 0 {
			os.Exit(code)
		}
		// Forked from this thread, the stressing process has the filter.
		c := exec.Command(os.Args[0], "-test.run=^TestEveryAnswerReachesItsTask$", os.Getenv("WARDEN_TEST_DIR"))
		c.Env = append(os.Environ(), "WARDEN_TEST_STRESS=1", "WARDEN_TEST_STRESS_HELPER=")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Run(); err != nil {
			os.Exit(7)
		}
		os.Exit(0)
	}
	files := 20000
	if testing.Short() {
		files = 4000
	}
	dir := t.TempDir()
	helper, fd := helperProcess(t, "TestEveryAnswerReachesItsTask", "WARDEN_TEST_STRESS_HELPER=1")
	helper.Env = append(helper.Env, "WARDEN_TEST_DIR="+dir, "WARDEN_TEST_FILES="+strconv.Itoa(files))
	var out strings.Builder
	helper.Stdout, helper.Stderr = &out, &out
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	w := wardenOf(t, helper, fd)
	stop := make(chan struct{})
	var noise sync.WaitGroup
	noise.Add(2)
	go func() { // the collector's signals
		defer noise.Done()
		var keep [][]byte
		for {
			select {
			case <-stop:
				return
			default:
			}
			keep = append(keep, make([]byte, 64<<10))
			if len(keep) > 64 {
				keep = nil
			}
		}
	}()
	go func() { // signals at the launcher's threads
		defer noise.Done()
		signalSelf(stop, 20*time.Microsecond)
	}()
	ended := serve(t, w)
	err := helper.Wait()
	close(stop)
	noise.Wait()
	ended()
	if err != nil {
		t.Fatalf("the stressing process: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "stress: 0 wrong") {
		t.Fatalf("a task got a descriptor it did not ask for:\n%s", out.String())
	}
	t.Log(strings.TrimSpace(out.String()))
}

// stressNames makes WARDEN_TEST_FILES files in dir from several threads,
// each with signals of its own, and checks every descriptor it gets.
func stressNames(dir string) int {
	files, _ := strconv.Atoi(os.Getenv("WARDEN_TEST_FILES"))
	const threads = 6
	var wrong, failed atomic.Int64
	var report sync.Mutex
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go signalSelf(stop, 50*time.Microsecond) // the task's own signals
	for th := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := th; i < files; i += threads {
				path := fmt.Sprintf("%s/f%d", dir, i)
				fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
				if err != nil {
					failed.Add(1)
					report.Lock()
					fmt.Printf("open %s: %v\n", path, err)
					report.Unlock()
					continue
				}
				var got, want unix.Stat_t
				if unix.Fstat(fd, &got) != nil || unix.Stat(path, &want) != nil || got.Dev != want.Dev || got.Ino != want.Ino {
					wrong.Add(1)
					report.Lock()
					fmt.Printf("open %s gave descriptor %d, another file\n", path, fd)
					report.Unlock()
					continue // not ours to close
				}
				unix.Close(fd)
			}
		}()
	}
	wg.Wait()
	close(stop)
	fmt.Printf("stress: %d wrong, %d failed of %d\n", wrong.Load(), failed.Load(), files)
	if wrong.Load() > 0 || failed.Load() > 0 {
		return 1
	}
	return 0
}

// signalSelf sends this process SIGURG, which the Go runtime takes for a
// preemption request, every interval until stop is closed: the signal
// lands on any of its threads.
func signalSelf(stop <-chan struct{}, every time.Duration) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(every):
			unix.Kill(os.Getpid(), unix.SIGURG)
		}
	}
}

// A descriptor the task's table has no room for is an EMFILE for the task,
// as the kernel's own open would give, and the warden serves on: the
// task's next open, with room made, gets its file.
func TestFullTableAnswersEMFILE(t *testing.T) {
	if os.Getenv("WARDEN_TEST_FULL") == "1" {
		os.Exit(fillAndOpen(os.Args[len(os.Args)-1]))
	}
	if os.Getenv("WARDEN_TEST_FULL_HELPER") == "1" {
		runtime.LockOSThread()
		if code := installUncapped(); code != 0 {
			os.Exit(code)
		}
		c := exec.Command(os.Args[0], "-test.run=^TestFullTableAnswersEMFILE$", os.Getenv("WARDEN_TEST_DIR"))
		c.Env = append(os.Environ(), "WARDEN_TEST_FULL=1", "WARDEN_TEST_FULL_HELPER=")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		if err := c.Run(); err != nil {
			os.Exit(7)
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	helper, fd := helperProcess(t, "TestFullTableAnswersEMFILE", "WARDEN_TEST_FULL_HELPER=1")
	helper.Env = append(helper.Env, "WARDEN_TEST_DIR="+dir)
	var out strings.Builder
	helper.Stdout, helper.Stderr = &out, &out
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	w := wardenOf(t, helper, fd)
	ended := serve(t, w)
	err := helper.Wait()
	ended()
	if err != nil || !strings.Contains(out.String(), "full: EMFILE, then the file") {
		t.Fatalf("the process with a full table: %v\n%s", err, out.String())
	}
}

// fillAndOpen fills its descriptor table, opens a new file in dir through
// the warden, makes room and opens it again.
func fillAndOpen(dir string) int {
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 64, Max: 64}); err != nil {
		fmt.Println("setrlimit:", err)
		return 1
	}
	last := -1
	for {
		fd, err := unix.Dup(0)
		if err == unix.EMFILE {
			break
		}
		if err != nil {
			fmt.Println("dup:", err)
			return 1
		}
		last = fd
	}
	path := dir + "/made-when-full"
	if fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644); err != unix.EMFILE {
		fmt.Printf("open with a full table: descriptor %d, %v; want EMFILE\n", fd, err)
		return 1
	}
	unix.Close(last)
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	var got, want unix.Stat_t
	if err != nil || unix.Fstat(fd, &got) != nil || unix.Stat(path, &want) != nil || got.Ino != want.Ino {
		fmt.Printf("open with room: descriptor %d, %v; want the file\n", fd, err)
		return 1
	}
	fmt.Println("full: EMFILE, then the file")
	return 0
}
