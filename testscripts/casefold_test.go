package testscripts

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/claude-sandbox/claude-sandbox/testscripts/casefs"
	"github.com/rogpeppe/go-internal/testscript"
)

// fuseReason is empty when FUSE file systems can be mounted here.
func fuseReason() string {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return "no /dev/fuse"
	}
	fss, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return err.Error()
	}
	for _, l := range strings.Split(string(fss), "\n") {
		if strings.TrimSpace(strings.TrimPrefix(l, "nodev")) == "fuse" {
			return ""
		}
	}
	return "the kernel has no FUSE"
}

// casefold BACK MNT mounts the directory BACK at MNT through casefs, a
// file system that finds a name in any case and keeps the case it was
// made in, until the script ends. The file system is served by a process
// of its own (casefsServe): served by the test's process, a child that
// process forks into the mount (a script's `cd MNT` then `exec`) waits for
// it before its exec, holding the forking thread and its processor, and
// the next garbage collection, which waits for that processor, stops the
// server too: the test hangs (CI met it).
func casefold(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: casefold BACK MNT")
	}
	self, err := os.Executable()
	ts.Check(err)
	cmd := &exec.Cmd{
		Path:        self,
		Args:        []string{"casefs", ts.MkAbs(args[0]), ts.MkAbs(args[1])},
		Stderr:      ts.Stderr(),
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM},
	}
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "mounted\n" {
		_ = cmd.Wait()
		ts.Fatalf("casefs did not mount %s", args[1])
	}
	ts.Defer(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			ts.Logf("casefs on %s: %v", args[1], err)
		}
	})
}

// casefsServe is the command `casefs BACK MNT`: it mounts BACK at MNT, says
// "mounted" on its standard output, serves until SIGTERM or SIGINT, and
// unmounts.
func casefsServe(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: casefs BACK MNT")
		return 2
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	srv, err := casefs.Mount(args[0], args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "casefs: %v\n", err)
		return 1
	}
	fmt.Println("mounted")
	<-stop
	if err := srv.Unmount(); err != nil {
		fmt.Fprintf(os.Stderr, "casefs: unmounting %s: %v\n", args[1], err)
		return 1
	}
	return 0
}
