package launcher

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A budget leaves a reserve of every limit that counts the sandbox's tasks,
// takes the tightest, and refuses a launch that would leave the sandbox too
// few tasks.
func TestPlanBudget(t *testing.T) {
	unlimited := unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
	machine := taskFacts{nproc: unlimited, pidMax: 32768, threadsMax: 192730, tasks: 400}
	for _, tc := range []struct {
		name  string
		facts taskFacts
		want  budget
		err   string
	}{
		{"root of the initial namespace: the kernel counts nothing", taskFacts{exempt: true, nproc: unix.Rlimit{Cur: 10, Max: 10}}, budget{}, ""},
		{"no limit but the machine's", machine,
			budget{tasks: 32368 - 32368/8}, ""},
		{"threads-max below pid_max", taskFacts{nproc: unlimited, pidMax: 4194304, threadsMax: 60000, tasks: 1000},
			budget{tasks: 59000 - 59000/8}, ""},
		{"the user's RLIMIT_NPROC sets the ceiling of all their tasks", withNproc(machine, 300, 300),
			budget{userCeiling: 300 - 37, tasks: 300}, ""},
		{"a soft RLIMIT_NPROC below the hard one", withNproc(machine, 1000, unix.RLIM_INFINITY),
			budget{userCeiling: 1000 - 125, tasks: 32368 - 32368/8}, ""},
		{"the tightest cgroup", withCgroups(machine, pidsLimit{"/sys/fs/cgroup/pids/a", 4000, 100}, pidsLimit{"/sys/fs/cgroup/pids/a/b", 400, 10}),
			budget{tasks: 390 - 48}, ""},
		{"a small cgroup keeps the least reserve", withCgroups(machine, pidsLimit{"/c", 120, 10}),
			budget{tasks: 110 - 32}, ""},
		{"a cgroup over its limit", withCgroups(machine, pidsLimit{"/c", 100, 150}), budget{},
			"only 0 more processes can start here (pids.max of /c is 100, 150 in use): too few for a sandbox (at least 64 beside 32 kept for the launcher)"},
		{"a cgroup nearly full", withCgroups(machine, pidsLimit{"/c", 1000, 910}), budget{},
			"only 90 more processes can start here (pids.max of /c is 1000, 910 in use): too few for a sandbox (at least 64 beside 32 kept for the launcher)"},
		{"a tiny RLIMIT_NPROC", withNproc(machine, 90, 90), budget{},
			"RLIMIT_NPROC (ulimit -u) is 90: too few processes for a sandbox (at least 64 beside 32 kept for the launcher)"},
		{"a full machine", taskFacts{nproc: unlimited, pidMax: 32768, threadsMax: 192730, tasks: 32700}, budget{},
			"only 68 more processes can start here (kernel.pid_max is 32768, 32700 in use): too few for a sandbox (at least 64 beside 32 kept for the launcher)"},
	} {
		got, err := planBudget(tc.facts)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: planBudget = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func withNproc(f taskFacts, soft, hard uint64) taskFacts {
	f.nproc = unix.Rlimit{Cur: soft, Max: hard}
	return f
}

func withCgroups(f taskFacts, c ...pidsLimit) taskFacts {
	f.cgroups = c
	return f
}

// Every cgroup between the process's own and the root of each pids
// hierarchy counts a fork: cgroup v2, and v1's pids controller, mounted
// whole or (in a container) from the container's own cgroup down.
func TestPidsLimits(t *testing.T) {
	dir := t.TempDir()
	v2, v1 := filepath.Join(dir, "unified"), filepath.Join(dir, "pids dir")
	for _, c := range []struct {
		path, max, current string
	}{
		{v2 + "/user.slice", "5000", "300"},
		{v2 + "/user.slice/session.scope", "max", "20"},
		{v1 + "/ctr", "700", "60"},
		{v1 + "/ctr/inner", "1000", "10"},
	} {
		must(t, os.MkdirAll(c.path, 0o755))
		must(t, os.WriteFile(filepath.Join(c.path, "pids.max"), []byte(c.max+"\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(c.path, "pids.current"), []byte(c.current+"\n"), 0o644))
	}
	// The hierarchy's own root has no pids.max.
	must(t, os.WriteFile(filepath.Join(v1, "pids.current"), []byte("90\n"), 0o644))
	proc := filepath.Join(dir, "proc")
	must(t, os.MkdirAll(filepath.Join(proc, "self"), 0o755))
	must(t, os.WriteFile(filepath.Join(proc, "self/cgroup"), []byte(
		"8:pids:/docker/abc/ctr/inner\n7:memory:/docker/abc\n0::/user.slice/session.scope\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(proc, "self/mountinfo"), []byte(strings.Join([]string{
		"22 1 0:20 / / rw - ext4 /dev/sda rw",
		"30 22 0:25 / " + v2 + " rw,nosuid - cgroup2 cgroup2 rw",
		"31 22 0:26 /docker/abc " + strings.ReplaceAll(v1, " ", `\040`) + " rw - cgroup cgroup rw,pids",
		"32 22 0:27 /docker/abc " + dir + "/memory rw - cgroup cgroup rw,memory",
		"33 22 0:28 /elsewhere " + dir + "/other rw - cgroup cgroup rw,pids",
	}, "\n")+"\n"), 0o644))
	got, err := pidsLimits(proc)
	if err != nil {
		t.Fatal(err)
	}
	want := []pidsLimit{
		{v1 + "/ctr/inner", 1000, 10},
		{v1 + "/ctr", 700, 60},
		{v2 + "/user.slice", 5000, 300},
	}
	if len(got) != len(want) {
		t.Fatalf("pidsLimits = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pidsLimits[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A kernel without cgroups has no pids limit to read.
func TestPidsLimitsWithoutCgroups(t *testing.T) {
	proc := t.TempDir()
	if got, err := pidsLimits(proc); err != nil || got != nil {
		t.Errorf("pidsLimits without /proc/self/cgroup = %v, %v; want none", got, err)
	}
}

func TestTasksNow(t *testing.T) {
	loadavg := filepath.Join(t.TempDir(), "loadavg")
	must(t, os.WriteFile(loadavg, []byte("1.52 0.89 0.57 3/95 3134\n"), 0o644))
	if n, err := tasksNow(loadavg); err != nil || n != 95 {
		t.Errorf("tasksNow = %d, %v; want 95", n, err)
	}
	must(t, os.WriteFile(loadavg, []byte("1.52 0.89\n"), 0o644))
	if _, err := tasksNow(loadavg); err == nil {
		t.Errorf("tasksNow of a short line: no error")
	}
}

// The launcher makes its threads before the sandbox starts: afterwards the
// process has at least that many, idle.
func TestReserveThreads(t *testing.T) {
	reserveThreads(launcherThreads())
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(status), "\nThreads:")
	var threads int
	for _, c := range strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]) {
		threads = threads*10 + int(c-'0')
	}
	if want := launcherThreads(); threads < want {
		t.Errorf("after reserveThreads the process has %d threads, want at least %d", threads, want)
	}
}

// Only uid 0 mapped to uid 0 of the initial namespace is exempt: root of a
// container with its own user namespace (rootless) is counted.
func TestRootOfInitialNamespace(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("reads uid_map only as root")
	}
	proc := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(proc, "self"), 0o755))
	for uidMap, want := range map[string]bool{
		"         0          0 4294967295\n": true,
		"         0     100000      65536\n": false,
	} {
		must(t, os.WriteFile(filepath.Join(proc, "self/uid_map"), []byte(uidMap), 0o644))
		if got, err := rootOfInitialNamespace(proc); err != nil || got != want {
			t.Errorf("uid_map %q: rootOfInitialNamespace = %v, %v; want %v", uidMap, got, err, want)
		}
	}
}

// The sandbox's first process is named as soon as bwrap made it; the exit
// code comes later, and only if the command ran.
func TestStatusReader(t *testing.T) {
	s := newStatusReader(strings.NewReader("{ \"child-pid\": 42, \"cgroup-namespace\": 1 }\n{ \"exit-code\": 3 }\n"))
	if pid, ok := s.childPID(); !ok || pid != 42 {
		t.Errorf("childPID = %d, %v; want 42", pid, ok)
	}
	if code, ok := s.rest()["exit-code"].(float64); !ok || code != 3 {
		t.Errorf("rest has exit-code %v, want 3", code)
	}
	s = newStatusReader(strings.NewReader(""))
	if _, ok := s.childPID(); ok {
		t.Errorf("childPID of an empty status: ok")
	}
}

// A failure to confine the first process is bwrap's failed setup only when
// that process has ended, reaped or not: a zombie's /proc files belong to
// root, so a non-root launcher meets EACCES there, not ENOENT.
func TestEnded(t *testing.T) {
	eacces := &os.PathError{Op: "open", Path: "/proc/N/oom_score_adj", Err: unix.EACCES}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	if ended(live.Process.Pid, eacces) {
		t.Error("a running process taken for ended on EACCES")
	}
	if !ended(live.Process.Pid, unix.ESRCH) {
		t.Error("ESRCH not taken for an ended process")
	}

	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	pid := zombie.Process.Pid
	for {
		// Not reaped until Wait below: the process stays a zombie.
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if !ended(pid, eacces) {
		t.Error("a zombie not taken for ended on EACCES")
	}
	if err := zombie.Wait(); err != nil {
		t.Fatal(err)
	}
	if !ended(pid, eacces) {
		t.Error("a reaped process not taken for ended")
	}
}
