package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/claude-sandbox/claude-sandbox/internal/mountinfo"
	"github.com/claude-sandbox/claude-sandbox/internal/procstatus"
	"github.com/claude-sandbox/claude-sandbox/sandbox"
	"github.com/claude-sandbox/claude-sandbox/warden"
	"golang.org/x/sys/unix"
)

// The sandbox shares the kernel's task limits (RLIMIT_NPROC per user, a
// cgroup's pids.max, pid_max and threads-max for the machine) with the
// launcher that runs its proxies: a fork flood inside must not leave the
// launcher unable to create the thread it needs (ADR 0016).

// minSandboxTasks is the fewest tasks (processes and threads) a sandbox is
// started with: Claude Code alone runs a few dozen threads.
const minSandboxTasks = 64

// minReserve is the fewest tasks a limit keeps back for the launcher and
// everything else outside the sandbox.
const minReserve = 32

// spareThreads are the OS threads the launcher makes, before the sandbox
// starts, beyond one per GOMAXPROCS and those it keeps for good (the
// warden's, and the one that started bwrap): for goroutines blocked in
// system calls (writing the denial log, reading resolv.conf). Under load
// both proxies together peak at about GOMAXPROCS+8 threads.
const spareThreads = 8

// launcherThreads is how many threads reserveThreads makes.
func launcherThreads() int {
	return runtime.GOMAXPROCS(0) + spareThreads + warden.Threads + 1
}

// reserve is what a headroom of h tasks keeps back for everything outside
// the sandbox: an eighth of it, at least minReserve.
func reserve(h uint64) uint64 {
	return max(minReserve, h/8)
}

// taskFacts are the limits on tasks that bind the launching user, read
// from the kernel at launch.
type taskFacts struct {
	exempt bool        // the kernel counts no task of this user against RLIMIT_NPROC (root of the initial user namespace)
	nproc  unix.Rlimit // the launcher's RLIMIT_NPROC
	// The machine: kernel.pid_max, kernel.threads-max, and the tasks that exist.
	pidMax, threadsMax, tasks uint64
	cgroups                   []pidsLimit // each cgroup above the launcher with a pids.max
}

// pidsLimit is one cgroup's pids.max and pids.current.
type pidsLimit struct {
	dir          string
	max, current uint64
}

// budget is what one sandbox may use. Zero fields set nothing.
type budget struct {
	// userCeiling is the soft RLIMIT_NPROC bwrap starts with. The kernel
	// records it in the user namespace bwrap creates and compares it, at
	// each fork inside, with the count of all the user's tasks: the sandbox
	// stops short of the user's own limit by a reserve, whatever else the
	// user runs, here or in other containers.
	userCeiling uint64
	// tasks is the RLIMIT_NPROC (soft and hard) of the sandbox's first
	// process, which everything inside inherits: the kernel compares it with
	// the count of the sandbox's own tasks, which live in their own user
	// namespace. It keeps a reserve of each cgroup's and the machine's
	// headroom.
	tasks uint64
}

// planBudget computes the sandbox's budget, or refuses a launch that would
// leave the sandbox fewer than minSandboxTasks.
func planBudget(f taskFacts) (budget, error) {
	if f.exempt {
		// Root's tasks are not counted (kernel/fork.c exempts INIT_USER),
		// inside the sandbox as outside; the launcher's reserved threads
		// are what keeps it alive there.
		return budget{}, nil
	}
	var b budget
	if f.nproc.Cur != unix.RLIM_INFINITY {
		if f.nproc.Cur < minSandboxTasks+reserve(f.nproc.Cur) {
			return budget{}, fmt.Errorf("RLIMIT_NPROC (ulimit -u) is %d: too few processes for a sandbox (at least %d beside %d kept for the launcher)", f.nproc.Cur, minSandboxTasks, reserve(f.nproc.Cur))
		}
		b.userCeiling = f.nproc.Cur - reserve(f.nproc.Cur)
	}
	consider := func(limit, current uint64, name string) error {
		free := uint64(0)
		if limit > current {
			free = limit - current
		}
		if free < minSandboxTasks+reserve(free) {
			return fmt.Errorf("only %d more processes can start here (%s, %d in use): too few for a sandbox (at least %d beside %d kept for the launcher)", free, name, current, minSandboxTasks, reserve(free))
		}
		if b.tasks == 0 || free-reserve(free) < b.tasks {
			b.tasks = free - reserve(free)
		}
		return nil
	}
	machine, name := f.pidMax, fmt.Sprintf("kernel.pid_max is %d", f.pidMax)
	if f.threadsMax < machine {
		machine, name = f.threadsMax, fmt.Sprintf("kernel.threads-max is %d", f.threadsMax)
	}
	if err := consider(machine, f.tasks, name); err != nil {
		return budget{}, err
	}
	for _, c := range f.cgroups {
		if err := consider(c.max, c.current, fmt.Sprintf("pids.max of %s is %d", c.dir, c.max)); err != nil {
			return budget{}, err
		}
	}
	if f.nproc.Max != unix.RLIM_INFINITY && b.tasks > f.nproc.Max {
		b.tasks = f.nproc.Max // only lowered: raising a hard limit takes CAP_SYS_RESOURCE
	}
	return b, nil
}

// readTaskFacts reads the task limits of this process from proc (/proc) and
// the cgroup file systems it names.
func readTaskFacts(proc string) (taskFacts, error) {
	var f taskFacts
	var err error
	if f.exempt, err = rootOfInitialNamespace(proc); err != nil {
		return f, err
	}
	if err := unix.Prlimit(0, unix.RLIMIT_NPROC, nil, &f.nproc); err != nil {
		return f, fmt.Errorf("getrlimit(RLIMIT_NPROC): %w", err)
	}
	for _, v := range []struct {
		file string
		into *uint64
	}{{"sys/kernel/pid_max", &f.pidMax}, {"sys/kernel/threads-max", &f.threadsMax}} {
		if *v.into, err = readCount(filepath.Join(proc, v.file)); err != nil {
			return f, err
		}
	}
	if f.tasks, err = tasksNow(filepath.Join(proc, "loadavg")); err != nil {
		return f, err
	}
	if f.cgroups, err = pidsLimits(proc); err != nil {
		return f, err
	}
	return f, nil
}

// rootOfInitialNamespace reports whether this process's user is uid 0 of the
// initial user namespace, whose tasks RLIMIT_NPROC does not count.
func rootOfInitialNamespace(proc string) (bool, error) {
	if os.Getuid() != 0 {
		return false, nil
	}
	data, err := os.ReadFile(filepath.Join(proc, "self/uid_map"))
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) == 3 && fields[0] == "0" {
			return fields[1] == "0", nil
		}
	}
	return false, nil
}

func readCount(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a count", path, strings.TrimSpace(string(data)))
	}
	return n, nil
}

// tasksNow is the number of tasks on the machine: the fourth field of
// loadavg, "running/total".
func tasksNow(loadavg string) (uint64, error) {
	data, err := os.ReadFile(loadavg)
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(data))
	if len(fields) >= 4 {
		if _, total, ok := strings.Cut(fields[3], "/"); ok {
			if n, err := strconv.ParseUint(total, 10, 64); err == nil {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: %q has no task count", loadavg, strings.TrimSpace(string(data)))
}

// pidsLimits returns the pids.max of every cgroup from this process's own up
// to the root of each mounted pids hierarchy (cgroup v2, and v1's pids
// controller): a fork is charged to each of them.
func pidsLimits(proc string) ([]pidsLimit, error) {
	memberships, err := os.ReadFile(filepath.Join(proc, "self/cgroup"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // a kernel without cgroups
	}
	if err != nil {
		return nil, err
	}
	v1, v2, err := pidsHierarchies(proc)
	if err != nil {
		return nil, err
	}
	var out []pidsLimit
	for _, line := range strings.Split(string(memberships), "\n") {
		// hierarchy-id:controllers:path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var candidates []hierarchy
		switch {
		case parts[0] == "0" && parts[1] == "":
			candidates = v2
		case mountinfo.HasOption(parts[1], "pids"):
			candidates = v1
		}
		for _, h := range candidates {
			out = append(out, h.limitsAbove(parts[2])...)
		}
	}
	return out, nil
}

// A hierarchy is a mount of a cgroup hierarchy: the cgroup at its root,
// and where it is mounted.
type hierarchy struct{ root, point string }

// pidsHierarchies are the mounts of cgroup v1's pids hierarchy and of
// cgroup v2 that this process sees.
func pidsHierarchies(proc string) (v1, v2 []hierarchy, err error) {
	table, err := os.Open(filepath.Join(proc, "self/mountinfo"))
	if err != nil {
		return nil, nil, err
	}
	defer table.Close()
	mounts, err := mountinfo.Parse(table)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range mounts {
		h := hierarchy{m.Root, m.Point}
		switch {
		case m.FSType == "cgroup2":
			v2 = append(v2, h)
		case m.FSType == "cgroup" && mountinfo.HasOption(m.SuperOptions, "pids"):
			v1 = append(v1, h)
		}
	}
	return v1, v2, nil
}

// limitsAbove are the pids limits of cgroup and of every cgroup above it
// that the mount h shows; none when h does not show cgroup.
func (h hierarchy) limitsAbove(cgroup string) []pidsLimit {
	rel, err := filepath.Rel(h.root, cgroup)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	var out []pidsLimit
	for dir := filepath.Join(h.point, rel); ; dir = filepath.Dir(dir) {
		if l, ok := readPidsLimit(dir); ok {
			out = append(out, l)
		}
		if dir == h.point || dir == "/" {
			return out
		}
	}
}

// readPidsLimit reads dir's pids.max and pids.current; ok is false where
// either is missing or the maximum is "max".
func readPidsLimit(dir string) (pidsLimit, bool) {
	limit, err := readCount(filepath.Join(dir, "pids.max"))
	if err != nil {
		return pidsLimit{}, false
	}
	current, err := readCount(filepath.Join(dir, "pids.current"))
	if err != nil {
		return pidsLimit{}, false
	}
	return pidsLimit{dir: dir, max: limit, current: current}, true
}

// reserveThreads makes the Go runtime create the OS threads the launcher
// will need, now, while the sandbox does not exist yet: each of n
// goroutines holds a thread of its own until all have one. The runtime
// keeps idle threads and takes one of them before it creates another, so
// the proxies never need a new thread while the sandbox may have used up
// every task the kernel allows (a thread the runtime cannot create is a
// fatal error, "newosproc").
func reserveThreads(n int) {
	var held sync.WaitGroup
	release := make(chan struct{})
	held.Add(n)
	for range n {
		go func() {
			runtime.LockOSThread()
			held.Done()
			<-release
			runtime.UnlockOSThread()
		}()
	}
	held.Wait()
	close(release)
}

// confine sets the budget and the OOM score on the sandbox's first process,
// pid, which bwrap holds (--block-fd) before it starts anything: every
// process of the sandbox descends from it and inherits both. The process
// can lower neither below what is set here, except the OOM score back to
// the launcher's own.
func confine(pid int, b budget) error {
	if b.tasks > 0 {
		if err := unix.Prlimit(pid, unix.RLIMIT_NPROC, &unix.Rlimit{Cur: b.tasks, Max: b.tasks}, nil); err != nil {
			return fmt.Errorf("cannot limit the sandbox's processes: prlimit(%d, RLIMIT_NPROC): %w", pid, err)
		}
	}
	adj, err := os.OpenFile(fmt.Sprintf("/proc/%d/oom_score_adj", pid), os.O_WRONLY, 0)
	if err == nil {
		_, err = fmt.Fprint(adj, sandbox.OOMScoreAdj)
		if cerr := adj.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("cannot make the sandbox the OOM killer's first choice: %w", err)
	}
	return nil
}

// ended tells whether confine's failure, err, on the sandbox's first
// process pid means that the process has already ended: bwrap's own
// failure to set the sandbox up (a mount refused), which bwrap has told
// on stderr. An ended process may not be reaped yet: a zombie still takes
// signals, and without its memory its /proc files belong to root, so
// opening one fails with EACCES, not ENOENT (CI met it as a non-root user).
func ended(pid int, err error) bool {
	if errors.Is(err, unix.ESRCH) || errors.Is(err, unix.ENOENT) {
		return true
	}
	st, rerr := procstatus.Read(strconv.Itoa(pid))
	if rerr != nil {
		return errors.Is(rerr, fs.ErrNotExist) || errors.Is(rerr, unix.ESRCH)
	}
	// A process past exit_mm but not yet a zombie still shows as running;
	// only a process with memory has VmSize.
	_, hasMemory := st["VmSize"]
	state := st["State"]
	return !hasMemory || strings.HasPrefix(state, "Z") || strings.HasPrefix(state, "X")
}

// withUserCeiling runs start (which starts bwrap) with the launcher's soft
// RLIMIT_NPROC lowered to ceiling, and restores it after: bwrap inherits
// the ceiling and hands it to the user namespace it creates.
func withUserCeiling(ceiling uint64, start func() error) error {
	if ceiling == 0 {
		return start()
	}
	var old unix.Rlimit
	if err := unix.Prlimit(0, unix.RLIMIT_NPROC, nil, &old); err != nil {
		return fmt.Errorf("getrlimit(RLIMIT_NPROC): %w", err)
	}
	if err := unix.Prlimit(0, unix.RLIMIT_NPROC, &unix.Rlimit{Cur: ceiling, Max: old.Max}, nil); err != nil {
		return fmt.Errorf("cannot lower RLIMIT_NPROC for the sandbox: %w", err)
	}
	defer unix.Prlimit(0, unix.RLIMIT_NPROC, &old, nil)
	return start()
}
