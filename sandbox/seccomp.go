package sandbox

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/claude-sandbox/claude-sandbox/internal/seccompbpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The seccomp filter bwrap installs before it runs Claude. It closes what the
// mount and namespace setup cannot, and it is written as data: the table
// seccompFilter below, one row per rule (name, syscall, argument condition,
// action, why), compiled to BPF by internal/seccompbpf. The plan holds it,
// `argv --explain` prints it, and docs/policy.md lists the same rows.
//
// How a syscall is judged:
//   - any other syscall ABI than the native one (i386, x32, arm32) fails with
//     EPERM before any rule: the rules are written in native syscall numbers,
//     and the native ABI has no socketcall(2), so socket() and socketpair()
//     are the only ways to create a socket (io_uring, whose IORING_OP_SOCKET
//     would be a third, is refused below);
//   - the rules of the syscall are tried in table order and the first whose
//     conditions all hold decides;
//   - a syscall that no rule matches is allowed.
//
// Sockets are an allow-list: socket() ends in a rule without conditions, so
// only the families listed before it can be created (inet and inet6 for the
// network; netlink for NETLINK_ROUTE alone, which getaddrinfo, getifaddrs
// and `ip` read addresses and routes with). Every other family (vsock, which
// reaches the hypervisor and other VMs and is in no network namespace;
// packet, alg, bluetooth, can, rds, tipc, xdp, kcm, …, and any added later)
// fails with EAFNOSUPPORT, and every other netlink protocol with
// EPROTONOSUPPORT: the answers of a kernel built without them, which
// programs already handle by going without. Unix sockets are allowed: what
// they may reach is the warden's to decide (ADR 0024). The kernel never sees
// a refused family, so it loads no module for one either.
//
// Condition values are compared with an argument's low 32 bits: every
// argument the rules read is an int, or a flag word whose tested bits are
// all in the low 32, and the kernel reads them so too.

// SeccompFilter is the sandbox's syscall filter as data: what the plan
// holds, `argv --explain` prints, and SeccompProgram compiles.
type SeccompFilter struct {
	OtherABI  SeccompAction // a call of any other ABI than the native one
	Rules     []SeccompRule
	Otherwise SeccompAction // a call no rule decides
}

// A SeccompRule is one row of the filter's table.
type SeccompRule struct {
	Name    string // docs/policy.md names the rule so
	Syscall Syscall
	When    []SeccompCond // all must hold; none: any arguments
	Action  SeccompAction
	Why     string
}

// A Syscall is a system call by its name and native number.
type Syscall struct {
	Name string
	Nr   uint32
}

// A SeccompCond tests an argument's low 32 bits, masked first when
// Mask.Value is not 0.
type SeccompCond struct {
	Arg    SyscallArg
	Mask   SeccompValue
	Test   seccompbpf.Test
	Values []SeccompValue
}

// A SyscallArg is an argument by position and by what it is.
type SyscallArg struct {
	N    int
	Name string
}

// A SeccompValue is a number the rules use, by the name C gives it.
type SeccompValue struct {
	Name  string
	Value uint32
}

// SeccompAction is what the filter answers: a SECCOMP_RET_ value.
type SeccompAction uint32

func errno(e unix.Errno) SeccompAction { return unix.SECCOMP_RET_ERRNO | SeccompAction(e) }

const allow SeccompAction = unix.SECCOMP_RET_ALLOW

func (a SeccompAction) String() string {
	switch {
	case a == allow:
		return "allow"
	case a&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO:
		return unix.ErrnoName(unix.Errno(a & unix.SECCOMP_RET_DATA))
	}
	return fmt.Sprintf("%#x", uint32(a))
}

func argIs(arg SyscallArg, values ...SeccompValue) SeccompCond {
	return SeccompCond{Arg: arg, Test: seccompbpf.IsOneOf, Values: values}
}

func argMaskedIsNot(arg SyscallArg, mask, v SeccompValue) SeccompCond {
	return SeccompCond{Arg: arg, Mask: mask, Test: seccompbpf.IsNot, Values: []SeccompValue{v}}
}

func argHasAny(arg SyscallArg, bits SeccompValue) SeccompCond {
	return SeccompCond{Arg: arg, Test: seccompbpf.HasAny, Values: []SeccompValue{bits}}
}

// The syscalls, arguments and values the rules name.
var (
	sysSocket     = Syscall{"socket", unix.SYS_SOCKET}
	sysSocketpair = Syscall{"socketpair", unix.SYS_SOCKETPAIR}

	argFamily   = SyscallArg{0, "family"}
	argType     = SyscallArg{1, "type"}
	argProtocol = SyscallArg{2, "protocol"}
	argRequest  = SyscallArg{1, "request"} // ioctl's
	argFlags    = SyscallArg{0, "flags"}   // unshare's and clone's

	afUnix       = SeccompValue{"AF_UNIX", unix.AF_UNIX}
	afInet       = SeccompValue{"AF_INET", unix.AF_INET}
	afInet6      = SeccompValue{"AF_INET6", unix.AF_INET6}
	afNetlink    = SeccompValue{"AF_NETLINK", unix.AF_NETLINK}
	netlinkRoute = SeccompValue{"NETLINK_ROUTE", unix.NETLINK_ROUTE}
	sockPacket   = SeccompValue{"SOCK_PACKET", unix.SOCK_PACKET}
	sockTypeMask = SeccompValue{"SOCK_TYPE_MASK", 0xf} // the type without SOCK_CLOEXEC, SOCK_NONBLOCK
	tiocsti      = SeccompValue{"TIOCSTI", unix.TIOCSTI}
	tioclinux    = SeccompValue{"TIOCLINUX", unix.TIOCLINUX}
	cloneNewUser = SeccompValue{"CLONE_NEWUSER", unix.CLONE_NEWUSER}
)

var seccompFilter = SeccompFilter{OtherABI: errno(unix.EPERM), Otherwise: allow, Rules: []SeccompRule{
	{"socket-unix", sysSocket, []SeccompCond{argIs(argFamily, afUnix)}, allow,
		"the sandbox's own unix sockets: the warden's filter sends every bind, connect and send with an address to the launcher, which lets a unix socket reach only a socket file the sandbox bound, or an abstract name in a network namespace of its own (ADR 0024)"},
	{"socket-inet", sysSocket, []SeccompCond{argIs(argFamily, afInet, afInet6), argMaskedIsNot(argType, sockTypeMask, sockPacket)}, allow,
		"the network, which the network namespace and the launcher's proxy confine; any type but SOCK_PACKET, with which AF_INET makes an AF_PACKET socket"},
	{"socket-netlink-route", sysSocket, []SeccompCond{argIs(argFamily, afNetlink), argIs(argProtocol, netlinkRoute)}, allow,
		"addresses and routes of the sandbox's own network namespace, read by getaddrinfo (AI_ADDRCONFIG), getifaddrs, Go's net.Interfaces and ip"},
	{"socket-netlink-other", sysSocket, []SeccompCond{argIs(argFamily, afNetlink)}, errno(unix.EPROTONOSUPPORT),
		"the other netlink protocols are not needed, and some are not namespaced (audit, uevents, the process connector) or are large attack surfaces (netfilter, xfrm, generic netlink)"},
	{"socket-other", sysSocket, nil, errno(unix.EAFNOSUPPORT),
		"every other family: vsock reaches the hypervisor and other VMs outside every network namespace; packet, alg, bluetooth, can, rds, tipc, xdp, kcm and the rest are not needed"},
	{"socketpair-unix", sysSocketpair, []SeccompCond{argIs(argFamily, afUnix)}, allow,
		"a connected pair reaches nothing outside, and shells and runtimes use it"},
	{"socketpair-other", sysSocketpair, nil, errno(unix.EAFNOSUPPORT),
		"no other family is needed; tipc is the only other that makes pairs"},
	{"ioctl-terminal-injection", Syscall{"ioctl", unix.SYS_IOCTL}, []SeccompCond{argIs(argRequest, tiocsti, tioclinux)}, errno(unix.EPERM),
		"pushing keystrokes into the terminal outside"},
	{"keyctl", Syscall{"keyctl", unix.SYS_KEYCTL}, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"},
	{"add_key", Syscall{"add_key", unix.SYS_ADD_KEY}, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"},
	{"request_key", Syscall{"request_key", unix.SYS_REQUEST_KEY}, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"},
	{"unshare-user", Syscall{"unshare", unix.SYS_UNSHARE}, []SeccompCond{argHasAny(argFlags, cloneNewUser)}, errno(unix.EPERM),
		"a nested user namespace hands out capabilities again"},
	{"clone-user", Syscall{"clone", unix.SYS_CLONE}, []SeccompCond{argHasAny(argFlags, cloneNewUser)}, errno(unix.EPERM),
		"a nested user namespace hands out capabilities again"},
	{"clone3", Syscall{"clone3", unix.SYS_CLONE3}, nil, errno(unix.ENOSYS),
		"its flags are in memory, which a filter cannot read; ENOSYS makes libc fall back to clone"},
	{"io_uring_setup", Syscall{"io_uring_setup", unix.SYS_IO_URING_SETUP}, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"},
	{"io_uring_enter", Syscall{"io_uring_enter", unix.SYS_IO_URING_ENTER}, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"},
	{"io_uring_register", Syscall{"io_uring_register", unix.SYS_IO_URING_REGISTER}, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"},
}}

// Explain is the filter as `argv --explain` shows it: one line a rule (the
// calls it decides, its action, why), after the line for other ABIs and
// before the line for the calls no rule decides.
func (f SeccompFilter) Explain() []string {
	out := []string{fmt.Sprintf("seccomp other-abi any call of another ABI than the native one (i386, x32, arm32) %s: the rules are written in native syscall numbers", f.OtherABI)}
	for _, r := range f.Rules {
		calls := r.Syscall.Name
		if len(r.When) > 0 {
			conds := make([]string, len(r.When))
			for i, c := range r.When {
				conds[i] = c.String()
			}
			calls += "(" + strings.Join(conds, ", ") + ")"
		}
		out = append(out, fmt.Sprintf("seccomp %s %s %s: %s", r.Name, calls, r.Action, r.Why))
	}
	return append(out, fmt.Sprintf("seccomp otherwise any other call %s: the mounts, the namespaces and the warden confine the rest; this filter closes what they cannot", f.Otherwise))
}

// String is the condition as the docs write it: "family AF_INET or
// AF_INET6", "type&SOCK_TYPE_MASK not SOCK_PACKET", "flags with
// CLONE_NEWUSER".
func (c SeccompCond) String() string {
	arg := c.Arg.Name
	if c.Mask.Value != 0 {
		arg += "&" + c.Mask.Name
	}
	names := make([]string, len(c.Values))
	for i, v := range c.Values {
		names[i] = v.Name
	}
	test := map[seccompbpf.Test]string{seccompbpf.IsOneOf: " ", seccompbpf.IsNot: " not ", seccompbpf.HasAny: " with "}[c.Test]
	return arg + test + strings.Join(names, " or ")
}

// compile is the filter's program.
func compile(f SeccompFilter) ([]bpf.RawInstruction, error) {
	out := seccompbpf.Filter{Arch: nativeArch, SecondABI: x32Bit, Foreign: uint32(f.OtherABI), Default: uint32(f.Otherwise)}
	for _, r := range f.Rules {
		rule := seccompbpf.Rule{Nr: r.Syscall.Nr, Action: uint32(r.Action)}
		for _, c := range r.When {
			values := make([]uint32, len(c.Values))
			for i, v := range c.Values {
				values[i] = v.Value
			}
			rule.When = append(rule.When, seccompbpf.Cond{Arg: c.Arg.N, Mask: c.Mask.Value, Test: c.Test, Values: values})
		}
		out.Rules = append(out.Rules, rule)
	}
	return seccompbpf.Compile(out)
}

// SeccompProgram is the filter as bwrap's --seccomp expects it: an array of
// struct sock_filter in native byte order. The table is fixed, so a table
// that does not compile is a programming error that every test run finds.
func SeccompProgram() []byte {
	prog, err := compile(seccompFilter)
	if err != nil {
		panic(fmt.Sprintf("the seccomp rules do not compile: %v", err))
	}
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		out = binary.NativeEndian.AppendUint16(out, in.Op)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out
}
