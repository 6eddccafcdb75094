package testscripts

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// The scripts that run a session under a limit on processes or memory do it
// as a throwaway user, in a throwaway cgroup.

var uidSeq atomic.Int64

// throwawayUser gives the script a user no one else uses, $TEST_UID, with
// the script's home and workspace: the kernel counts RLIMIT_NPROC per user,
// so no two scripts (of this run, and likely of another) share one. The
// user's processes are killed when the script ends, however it ends.
//
//	throwaway-user
func throwawayUser(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: throwaway-user")
	}
	uid := 200000 + (os.Getpid()%4096)*64 + int(uidSeq.Add(1)%64)
	work := ts.Getenv("WORK")
	ts.Setenv("TEST_UID", fmt.Sprint(uid))
	ts.Defer(func() { killUser(uid) })
	passwd, err := os.OpenFile(filepath.Join(work, "etc/passwd"), os.O_APPEND|os.O_WRONLY, 0)
	ts.Check(err)
	_, err = fmt.Fprintf(passwd, "throwaway:x:%d:%d:Throwaway User:%s:/bin/sh\n", uid, uid, filepath.Join(work, "home"))
	ts.Check(err)
	ts.Check(passwd.Close())
	for _, top := range []string{"home", "proj"} {
		ts.Check(filepath.WalkDir(filepath.Join(work, top), func(path string, _ os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(path, uid, uid)
		}))
	}
	// The user reaches the workspace, the passwd file and the test binary
	// linked into the workspace.
	for _, dir := range []string{filepath.Dir(work), work, filepath.Join(work, "etc")} {
		fi, err := os.Stat(dir)
		ts.Check(err)
		ts.Check(os.Chmod(dir, fi.Mode().Perm()|0o011))
	}
}

// killUser kills every process of uid until none is left (at most 10s).
func killUser(uid int) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		entries, _ := os.ReadDir("/proc")
		left := false
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			status, _ := os.ReadFile("/proc/" + e.Name() + "/status")
			if _, rest, ok := strings.Cut(string(status), "\nUid:"); ok {
				if ids := strings.Fields(rest); len(ids) > 0 && ids[0] == strconv.Itoa(uid) {
					left = true
					_ = unix.Kill(pid, unix.SIGKILL)
				}
			}
		}
		if !left {
			return
		}
	}
}

// A throwaway cgroup: in cgroup v1, a child of the test's own cgroup in the
// controller's hierarchy; in cgroup v2, a child of the root (the test's own
// cgroup holds processes, so it cannot hand controllers to a child).

// cgroupParents says where a cgroup with each controller can be made here.
type cgroupParents map[string]cgroupParent

type cgroupParent struct {
	dir string
	v2  bool
}

var cgroupControllers = []string{"pids", "memory"}

// findCgroupParents reads this process's cgroups and the mounted hierarchies.
func findCgroupParents() (cgroupParents, error) {
	memberships, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	mine := map[string]string{} // v1 controller -> this process's path in its hierarchy
	for _, line := range strings.Split(string(memberships), "\n") {
		if parts := strings.SplitN(line, ":", 3); len(parts) == 3 {
			for _, c := range strings.Split(parts[1], ",") {
				mine[c] = parts[2]
			}
		}
	}
	mounts, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer mounts.Close()
	out := cgroupParents{}
	v2 := ""
	sc := bufio.NewScanner(mounts)
	for sc.Scan() {
		pre, post, _ := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 {
			continue
		}
		root, point := fields[3], fields[4]
		switch tail[0] {
		case "cgroup2":
			if v2 == "" {
				v2 = point
			}
		case "cgroup":
			for _, c := range cgroupControllers {
				path, ok := mine[c]
				if !ok || !slices.Contains(strings.Split(tail[2], ","), c) {
					continue
				}
				rel, err := filepath.Rel(root, path)
				if err == nil && !strings.HasPrefix(rel, "..") {
					out[c] = cgroupParent{dir: filepath.Join(point, rel)}
				}
			}
		}
	}
	if v2 != "" {
		enabled, _ := os.ReadFile(filepath.Join(v2, "cgroup.subtree_control"))
		for _, c := range cgroupControllers {
			if _, ok := out[c]; !ok && slices.Contains(strings.Fields(string(enabled)), c) {
				out[c] = cgroupParent{dir: v2, v2: true}
			}
		}
	}
	for _, c := range cgroupControllers {
		if _, ok := out[c]; !ok {
			return nil, fmt.Errorf("no cgroup hierarchy here has the %s controller", c)
		}
	}
	return out, nil
}

// cgroupSupport says where throwaway pids and memory cgroups can be made
// here, or why none can.
func cgroupSupport() (cgroupParents, string) {
	if os.Geteuid() != 0 {
		return nil, "they need root"
	}
	parents, err := findCgroupParents()
	if err != nil {
		return nil, err.Error()
	}
	removeStaleCgroups(parents)
	cg, err := makeCgroup(parents, fmt.Sprintf("claude-sandbox-probe-%d", os.Getpid()), 1000, 64<<20)
	if err != nil {
		return nil, err.Error()
	}
	cg.remove()
	return parents, ""
}

// removeStaleCgroups removes the empty throwaway cgroups of test runs that
// were killed before they could (their test process is gone).
func removeStaleCgroups(parents cgroupParents) {
	for _, p := range parents {
		dirs, _ := filepath.Glob(filepath.Join(p.dir, "claude-sandbox-*-*"))
		for _, d := range dirs {
			f := strings.Split(filepath.Base(d), "-")
			if len(f) < 4 || (f[2] != "test" && f[2] != "probe") {
				continue
			}
			if _, err := os.Stat("/proc/" + f[3]); errors.Is(err, os.ErrNotExist) {
				_ = os.Remove(d) // fails, harmlessly, if something still runs in it
			}
		}
	}
}

// cgroup is one throwaway cgroup: a directory per hierarchy.
type cgroup struct {
	dirs []string
	oom  string // the file with its "oom_kill N" line
}

var cgroupSeq atomic.Int64

// makeCgroup makes a cgroup with both controllers and the given limits.
func makeCgroup(parents cgroupParents, name string, pids, memory int64) (*cgroup, error) {
	cg := &cgroup{}
	for _, c := range cgroupControllers {
		p := parents[c]
		dir := filepath.Join(p.dir, name)
		if !slices.Contains(cg.dirs, dir) {
			if err := os.Mkdir(dir, 0o755); err != nil {
				cg.remove()
				return nil, err
			}
			cg.dirs = append(cg.dirs, dir)
		}
		// The swap limit (memory and swap together in v1) is missing where
		// the kernel does not account swap: then nothing is swapped out.
		type limit struct {
			file, value string
			swap        bool
		}
		var limits []limit
		switch {
		case c == "pids":
			limits = []limit{{"pids.max", fmt.Sprint(pids), false}}
		case p.v2:
			limits = []limit{{"memory.max", fmt.Sprint(memory), false}, {"memory.swap.max", "0", true}}
			cg.oom = filepath.Join(dir, "memory.events")
		default:
			limits = []limit{{"memory.limit_in_bytes", fmt.Sprint(memory), false}, {"memory.memsw.limit_in_bytes", fmt.Sprint(memory), true}}
			cg.oom = filepath.Join(dir, "memory.oom_control")
		}
		for _, l := range limits {
			err := os.WriteFile(filepath.Join(dir, l.file), []byte(l.value), 0o644)
			if l.swap && errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				cg.remove()
				return nil, fmt.Errorf("cannot set %s: %w", filepath.Join(dir, l.file), err)
			}
		}
	}
	return cg, nil
}

// remove kills whatever is left in the cgroup and removes it.
func (cg *cgroup) remove() {
	deadline := time.Now().Add(10 * time.Second)
	for i := len(cg.dirs) - 1; i >= 0; i-- {
		for time.Now().Before(deadline) {
			procs, _ := os.ReadFile(filepath.Join(cg.dirs[i], "cgroup.procs"))
			for _, f := range strings.Fields(string(procs)) {
				if pid, err := strconv.Atoi(f); err == nil {
					_ = unix.Kill(pid, unix.SIGKILL)
				}
			}
			if err := os.Remove(cg.dirs[i]); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// cgroupCmd makes a throwaway cgroup for the script, removed at its end:
//
//	cgroup PIDS-MAX MEMORY-BYTES
//
// It sets $CGROUP_PROCS to the cgroup.procs files a process writes its pid
// to, to enter it, and $CGROUP_OOM to the file whose "oom_kill N" line counts
// the processes the OOM killer ended in it.
func cgroupCmd(parents cgroupParents) func(ts *testscript.TestScript, neg bool, args []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: cgroup PIDS-MAX MEMORY-BYTES")
		}
		pids, err1 := strconv.ParseInt(args[0], 10, 64)
		memory, err2 := strconv.ParseInt(args[1], 10, 64)
		if err1 != nil || err2 != nil {
			ts.Fatalf("usage: cgroup PIDS-MAX MEMORY-BYTES")
		}
		if parents == nil {
			ts.Fatalf("no cgroup can be made here: the script must skip unless [cgroup]")
		}
		name := fmt.Sprintf("claude-sandbox-test-%d-%d", os.Getpid(), cgroupSeq.Add(1))
		cg, err := makeCgroup(parents, name, pids, memory)
		ts.Check(err)
		ts.Defer(cg.remove)
		var procs []string
		for _, d := range cg.dirs {
			procs = append(procs, filepath.Join(d, "cgroup.procs"))
		}
		ts.Setenv("CGROUP_PROCS", strings.Join(procs, " "))
		ts.Setenv("CGROUP_OOM", cg.oom)
	}
}
