package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/seccompbpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// decode reads the program back from what bwrap is given.
func decode(prog []byte) []bpf.RawInstruction {
	var out []bpf.RawInstruction
	for i := 0; i+8 <= len(prog); i += 8 {
		out = append(out, bpf.RawInstruction{Op: binary.NativeEndian.Uint16(prog[i:]), Jt: prog[i+2], Jf: prog[i+3], K: binary.NativeEndian.Uint32(prog[i+4:])})
	}
	return out
}

// decide runs the program on the call in x/net/bpf's VM, as the kernel
// would.
func decide(t *testing.T, prog []bpf.RawInstruction, c call) seccompbpf.Action {
	t.Helper()
	sc := seccompbpf.Call{Arch: c.arch, Nr: uint32(c.nr)}
	copy(sc.Args[:], c.args)
	got, err := seccompbpf.Run(prog, sc)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	return seccompbpf.Action(got)
}

type call struct {
	name string
	arch uint32
	nr   uintptr
	args []uint64
	want seccompbpf.Action
}

var (
	eperm           = errno(unix.EPERM)
	enosys          = errno(unix.ENOSYS)
	eafnosupport    = errno(unix.EAFNOSUPPORT)
	eprotonosupport = errno(unix.EPROTONOSUPPORT)
)

// families names the address families the tests and docs talk about; the
// family tests cover every number up to 64 whatever its name.
var families = map[int]string{
	unix.AF_UNSPEC: "AF_UNSPEC", unix.AF_UNIX: "AF_UNIX", unix.AF_INET: "AF_INET", unix.AF_INET6: "AF_INET6",
	unix.AF_KEY: "AF_KEY", unix.AF_NETLINK: "AF_NETLINK", unix.AF_PACKET: "AF_PACKET", unix.AF_RDS: "AF_RDS",
	unix.AF_CAN: "AF_CAN", unix.AF_TIPC: "AF_TIPC", unix.AF_BLUETOOTH: "AF_BLUETOOTH", unix.AF_ALG: "AF_ALG",
	unix.AF_VSOCK: "AF_VSOCK", unix.AF_KCM: "AF_KCM", unix.AF_SMC: "AF_SMC", unix.AF_XDP: "AF_XDP", unix.AF_MAX: "AF_MAX",
}

func familyName(f int) string {
	if n, ok := families[f]; ok {
		return n
	}
	return fmt.Sprintf("family %d", f)
}

// socketCalls is the allow-list, family by family: socket() and
// socketpair() for every family number up to 64 (AF_MAX, the first number
// no kernel has yet, included), with the high bits of the argument set too
// (the kernel reads an int); every socket type of the inet families, with
// and without flags; every netlink protocol.
func socketCalls() []call {
	var calls []call
	for f := 0; f <= 64; f++ {
		socket, pair := eafnosupport, eafnosupport
		switch f {
		case unix.AF_UNIX:
			socket, pair = allow, allow
		case unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK:
			socket = allow
		}
		name := familyName(f)
		calls = append(calls,
			call{"socket(" + name + ")", nativeArch, unix.SYS_SOCKET, []uint64{uint64(f), unix.SOCK_STREAM | unix.SOCK_CLOEXEC, 0}, socket},
			call{"socket(" + name + "), high bits set", nativeArch, unix.SYS_SOCKET, []uint64{1<<32 | uint64(f), unix.SOCK_DGRAM, 0}, socket},
			call{"socketpair(" + name + ")", nativeArch, unix.SYS_SOCKETPAIR, []uint64{uint64(f), unix.SOCK_STREAM, 0}, pair},
			call{"socketpair(" + name + "), high bits set", nativeArch, unix.SYS_SOCKETPAIR, []uint64{1<<32 | uint64(f), unix.SOCK_SEQPACKET, 0}, pair})
	}
	types := map[string]uint64{"SOCK_STREAM": unix.SOCK_STREAM, "SOCK_DGRAM": unix.SOCK_DGRAM, "SOCK_RAW": unix.SOCK_RAW,
		"SOCK_SEQPACKET": unix.SOCK_SEQPACKET, "SOCK_PACKET": unix.SOCK_PACKET}
	for _, f := range []int{unix.AF_INET, unix.AF_INET6} {
		for tn, typ := range types {
			want := allow
			if typ == unix.SOCK_PACKET { // AF_INET's alias of AF_PACKET
				want = eafnosupport
			}
			for _, flags := range []uint64{0, unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK, 0xffffffff00000000} {
				calls = append(calls, call{fmt.Sprintf("socket(%s, %s|%#x)", familyName(f), tn, flags), nativeArch, unix.SYS_SOCKET, []uint64{uint64(f), typ | flags, 0}, want})
			}
		}
	}
	for p := uint64(0); p < 32; p++ {
		want := eprotonosupport
		if p == unix.NETLINK_ROUTE {
			want = allow
		}
		calls = append(calls,
			call{fmt.Sprintf("socket(AF_NETLINK, SOCK_RAW, %d)", p), nativeArch, unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, p}, want},
			call{fmt.Sprintf("socket(AF_NETLINK, SOCK_DGRAM, %d), high bits set", p), nativeArch, unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, 1<<32 | p}, want})
	}
	return calls
}

// TestSeccompRules runs every case through the filter bwrap is given, then
// through the table compiled without each rule in turn: each rule has a
// case that goes red when the rule is removed.
func TestSeccompRules(t *testing.T) {
	prog := decode(SeccompProgram())
	if compiled, err := seccompFilter.Program(nativeArch, x32Bit); err != nil || !slices.Equal(prog, compiled) {
		t.Fatalf("SeccompProgram is not the table's program (%v)", err)
	}
	tests := []call{
		{"TIOCSTI", nativeArch, unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI}, eperm},
		{"TIOCSTI, high bits set", nativeArch, unix.SYS_IOCTL, []uint64{0, 0xffffffff00000000 | unix.TIOCSTI}, eperm},
		{"TIOCLINUX", nativeArch, unix.SYS_IOCTL, []uint64{0, unix.TIOCLINUX}, eperm},
		{"TCGETS", nativeArch, unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, allow},
		{"TIOCGWINSZ", nativeArch, unix.SYS_IOCTL, []uint64{0, unix.TIOCGWINSZ}, allow},
		{"keyctl", nativeArch, unix.SYS_KEYCTL, nil, eperm},
		{"add_key", nativeArch, unix.SYS_ADD_KEY, nil, eperm},
		{"request_key", nativeArch, unix.SYS_REQUEST_KEY, nil, eperm},
		{"unshare user", nativeArch, unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWUSER | unix.CLONE_NEWNS}, eperm},
		{"unshare mount", nativeArch, unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWNS}, allow},
		{"clone user", nativeArch, unix.SYS_CLONE, []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, eperm},
		{"clone thread", nativeArch, unix.SYS_CLONE, []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD}, allow},
		{"clone3", nativeArch, unix.SYS_CLONE3, nil, enosys},
		{"io_uring_setup", nativeArch, unix.SYS_IO_URING_SETUP, nil, eperm},
		{"io_uring_enter", nativeArch, unix.SYS_IO_URING_ENTER, nil, eperm},
		{"io_uring_register", nativeArch, unix.SYS_IO_URING_REGISTER, nil, eperm},
		{"read", nativeArch, unix.SYS_READ, nil, allow},
		{"connect", nativeArch, unix.SYS_CONNECT, nil, allow},
		{"foreign arch i386", unix.AUDIT_ARCH_I386, unix.SYS_READ, nil, eperm},
		{"foreign arch i386, its socketcall", unix.AUDIT_ARCH_I386, 102, []uint64{1, 0}, eperm},
		{"foreign arch arm", unix.AUDIT_ARCH_ARM, unix.SYS_READ, nil, eperm},
	}
	if x32Bit != 0 {
		tests = append(tests, call{"x32 syscall", nativeArch, x32Bit | unix.SYS_READ, nil, eperm},
			call{"x32 socket(AF_VSOCK)", nativeArch, x32Bit | unix.SYS_SOCKET, []uint64{unix.AF_VSOCK, unix.SOCK_STREAM}, eperm})
	}
	tests = append(tests, socketCalls()...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decide(t, prog, tt); got != tt.want {
				t.Errorf("filter returned %s, want %s", got, tt.want)
			}
		})
	}
	for i, r := range seccompFilter.Rows {
		without := seccompFilter
		without.Rows = slices.Delete(slices.Clone(seccompFilter.Rows), i, i+1)
		withoutProg, err := without.Program(nativeArch, x32Bit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(tests, func(tt call) bool { return decide(t, withoutProg, tt) != tt.want }) {
			t.Errorf("rule %s (%s) answered no case: add one that goes red without it", r.Name, r.Why)
		}
	}
}

// TestSeccompRulesDocumented keeps docs/policy.md's seccomp table in step
// with the rules: each rule has a row that names it (a row may name several
// rules), and each name there is a rule.
func TestSeccompRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Syscall filter (seccomp)")
	section, _, _ = strings.Cut(section, "\n## ")
	documented := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		first, ok := strings.CutPrefix(line, "| `")
		if !ok {
			continue
		}
		first, _, _ = strings.Cut(first, " |")
		for _, name := range strings.Split(first, ", ") {
			documented[strings.Trim(name, "`")] = true
		}
	}
	named := map[string]bool{}
	for _, r := range seccompFilter.Rows {
		named[r.Name] = true
		if !documented[r.Name] {
			t.Errorf("docs/policy.md's seccomp table has no row naming the rule %s", r.Name)
		}
	}
	for name := range documented {
		if !named[name] {
			t.Errorf("docs/policy.md's seccomp table names %s, which is no rule", name)
		}
	}
}
