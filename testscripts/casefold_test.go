package testscripts

import (
	"os"
	"strings"

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
// made in, until the script ends.
func casefold(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: casefold BACK MNT")
	}
	srv, err := casefs.Mount(ts.MkAbs(args[0]), ts.MkAbs(args[1]))
	ts.Check(err)
	ts.Defer(func() {
		if err := srv.Unmount(); err != nil {
			ts.Logf("unmounting %s: %v", args[1], err)
		}
	})
}
