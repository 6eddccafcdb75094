package warden

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/seccompbpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// decide runs the program on one call in x/net/bpf's VM, as the kernel
// would.
func decide(t *testing.T, prog []bpf.RawInstruction, arch, nr uint32, args ...uint64) uint32 {
	t.Helper()
	c := seccompbpf.Call{Arch: arch, Nr: nr}
	copy(c.Args[:], args)
	got, err := seccompbpf.Run(prog, c)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// compile is the program of the table.
func compile(t *testing.T, tab seccompbpf.Table) []bpf.RawInstruction {
	t.Helper()
	prog, err := tab.Program(nativeArch, x32Bit)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

type filterCase struct {
	name string
	arch uint32
	nr   uintptr
	args []uint64
	want uint32
}

// TestFilter runs every case through the filter, then through the table
// compiled without each row in turn: each row has a case that goes red
// when it is removed.
func TestFilter(t *testing.T) {
	prog := compile(t, Filter())
	installed, err := program()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(prog, installed, func(in bpf.RawInstruction, got unix.SockFilter) bool {
		return got == unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}) {
		t.Fatal("the installed filter is not the table's program")
	}
	notify := uint32(unix.SECCOMP_RET_USER_NOTIF)
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	enosys := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	eperm := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	tests := []filterCase{
		{"openat with O_CREAT", nativeArch, unix.SYS_OPENAT, []uint64{0, 0, unix.O_CREAT | unix.O_WRONLY}, notify},
		{"openat for writing", nativeArch, unix.SYS_OPENAT, []uint64{0, 0, unix.O_WRONLY | unix.O_APPEND}, notify},
		{"openat for reading and writing", nativeArch, unix.SYS_OPENAT, []uint64{0, 0, unix.O_RDWR}, notify},
		{"openat truncating", nativeArch, unix.SYS_OPENAT, []uint64{0, 0, unix.O_RDONLY | unix.O_TRUNC}, notify},
		{"openat for reading", nativeArch, unix.SYS_OPENAT, []uint64{0, 0, unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW}, allow},
		{"openat O_PATH", nativeArch, unix.SYS_OPENAT, []uint64{0, 0, unix.O_PATH | unix.O_DIRECTORY}, allow},
		{"openat O_TMPFILE", nativeArch, unix.SYS_OPENAT, []uint64{0, 0, unix.O_TMPFILE | unix.O_WRONLY}, notify},
		{"truncate", nativeArch, unix.SYS_TRUNCATE, nil, notify},
		{"ftruncate", nativeArch, unix.SYS_FTRUNCATE, nil, allow},
		{"mkdirat", nativeArch, unix.SYS_MKDIRAT, nil, notify},
		{"mknodat", nativeArch, unix.SYS_MKNODAT, nil, notify},
		{"symlinkat", nativeArch, unix.SYS_SYMLINKAT, nil, notify},
		{"linkat", nativeArch, unix.SYS_LINKAT, nil, notify},
		{"renameat", nativeArch, unix.SYS_RENAMEAT, nil, notify},
		{"renameat2", nativeArch, unix.SYS_RENAMEAT2, nil, notify},
		{"openat2", nativeArch, unix.SYS_OPENAT2, nil, enosys},
		{"read", nativeArch, unix.SYS_READ, nil, allow},
		{"bind", nativeArch, unix.SYS_BIND, nil, notify},
		{"connect", nativeArch, unix.SYS_CONNECT, nil, notify},
		{"sendto without an address", nativeArch, unix.SYS_SENDTO, []uint64{3, 0x1000, 10, 0, 0, 0}, allow},
		{"sendto with an address", nativeArch, unix.SYS_SENDTO, []uint64{3, 0x1000, 10, 0, 0x7f0012345678, 110}, notify},
		{"sendto with an address above 4 GiB, low half zero", nativeArch, unix.SYS_SENDTO, []uint64{3, 0x1000, 10, 0, 0x7f0000000000, 110}, notify},
		{"sendmsg", nativeArch, unix.SYS_SENDMSG, nil, notify},
		{"sendmmsg", nativeArch, unix.SYS_SENDMMSG, nil, notify},
		{"umask", nativeArch, unix.SYS_UMASK, []uint64{0o077}, notify},
		{"write", nativeArch, unix.SYS_WRITE, nil, allow},
		{"recvmsg", nativeArch, unix.SYS_RECVMSG, nil, allow},
		{"unlinkat", nativeArch, unix.SYS_UNLINKAT, nil, allow},
		{"another architecture", nativeArch + 1, unix.SYS_MKDIRAT, nil, eperm},
	}
	for _, c := range legacyCalls {
		args := []uint64{0, 0, 0}
		for _, cond := range c.rows[0].When {
			args[cond.Arg.N] = unix.O_CREAT
		}
		tests = append(tests, filterCase{c.name(), nativeArch, c.nr(), args, notify})
	}
	if x32Bit != 0 {
		tests = append(tests, filterCase{"x32 mkdir", nativeArch, x32Bit | unix.SYS_MKDIRAT, nil, eperm})
	}
	for _, tc := range tests {
		if got := decide(t, prog, tc.arch, uint32(tc.nr), tc.args...); got != tc.want {
			t.Errorf("%s: filter returned %#x, want %#x", tc.name, got, tc.want)
		}
	}
	table := Filter()
	for i, r := range table.Rows {
		without := table
		without.Rows = slices.Delete(slices.Clone(table.Rows), i, i+1)
		prog := compile(t, without)
		if !slices.ContainsFunc(tests, func(tc filterCase) bool { return decide(t, prog, tc.arch, uint32(tc.nr), tc.args...) != tc.want }) {
			t.Errorf("row %s (%s) answered no case: add one that goes red without it", r.Name, r.Why)
		}
	}
}

// Every call the filter sends to the warden has a decoder, the table
// names each call once, all its rows being of that call, and each row
// once, with why.
func TestCallTable(t *testing.T) {
	seen := map[uintptr]string{}
	rows := map[string]bool{}
	for _, c := range calls() {
		if other, ok := seen[c.nr()]; ok {
			t.Errorf("%s and %s share number %d", c.name(), other, c.nr())
		}
		seen[c.nr()] = c.name()
		notifies := false
		for _, r := range c.rows {
			notifies = notifies || r.Action == seccompbpf.Notify
			if r.Syscall != c.rows[0].Syscall {
				t.Errorf("%s: a row of %s", c.name(), r.Syscall.Name)
			}
			if rows[r.Name] {
				t.Errorf("%s: two rows named %s", c.name(), r.Name)
			}
			rows[r.Name] = true
			if r.Why == "" {
				t.Errorf("%s: no reason given", r.Name)
			}
		}
		if notifies != (c.decode != nil) {
			t.Errorf("%s: a call is decoded exactly when the warden answers it", c.name())
		}
	}
}

func TestReleaseAtLeast(t *testing.T) {
	for release, want := range map[string]bool{
		"6.8.0-45-generic": true, "5.14.0-362.el9.x86_64": true, "5.13.19": false,
		"4.18.0-553.el8_10.x86_64": false, "6.18.44-fc-v657": true, "10.0": true, "garbage": false,
	} {
		if got := releaseAtLeast(release, [2]int{5, 14}); got != want {
			t.Errorf("releaseAtLeast(%q, 5.14) = %v, want %v", release, got, want)
		}
	}
}

// Once no task is left under the filter the kernel answers every receive
// at once with ENOENT: the workers end instead of spinning on it until the
// launcher exits. The filter's task is a child process (this test binary
// again, as TestWardenChild), which hands its listener over and exits.
func TestServeEndsWithTheSandbox(t *testing.T) {
	child, fd := helperProcess(t, "TestWardenChild", "WARDEN_TEST_CHILD=1")
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("the child could not install the filter: %v\n%s", err, out)
	}
	serve(t, wardenOf(t, child, fd))()
}

// TestWardenChild is the child of TestServeEndsWithTheSandbox: it installs
// the filter and sends its listener over descriptor 3.
func TestWardenChild(t *testing.T) {
	if os.Getenv("WARDEN_TEST_CHILD") != "1" {
		t.Skip("the child of TestServeEndsWithTheSandbox")
	}
	runtime.LockOSThread()
	if code := installAndSend(); code != 0 {
		t.Fatalf("installing the filter and sending its listener failed at step %d", code-1)
	}
}

// TestFilterDocumented keeps docs/policy.md's table of the warden's filter
// in step with the rows: each row has a line that names it (a line may
// name several), and each name there is a row; on another architecture
// than x86-64 a name its line marks "(x86-64 only)" may be missing.
func TestFilterDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## The warden's syscall filter (seccomp)\n")
	if !ok {
		t.Fatal("docs/policy.md has no section on the warden's syscall filter")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	documented := map[string]string{} // name: its line's syscall column
	for _, line := range strings.Split(section, "\n") {
		rest, ok := strings.CutPrefix(line, "| `")
		if !ok {
			continue
		}
		names, rest, _ := strings.Cut(rest, " | ")
		syscalls, _, _ := strings.Cut(rest, " | ")
		for _, name := range strings.Split(names, ", ") {
			documented[strings.Trim(name, "`")] = syscalls
		}
	}
	named := map[string]bool{}
	for _, r := range Filter().Rows {
		named[r.Name] = true
		if _, ok := documented[r.Name]; !ok {
			t.Errorf("docs/policy.md's table of the warden's filter has no line naming the row %s", r.Name)
		}
	}
	for name, syscalls := range documented {
		onlyX86 := strings.Contains(syscalls, "`"+name+"` (x86-64 only)")
		if !named[name] && (runtime.GOARCH == "amd64" || !onlyX86) {
			t.Errorf("docs/policy.md's table of the warden's filter names %s, which is no row", name)
		}
	}
}
