package sandbox

import (
	"encoding/binary"
	"fmt"

	"github.com/claude-sandbox/claude-sandbox/internal/seccompbpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The seccomp filter bwrap installs before it runs Claude. It closes what the
// mount and namespace setup cannot, and it is written as data: the table
// `rules` below, one row per rule (name, syscall, argument condition, action,
// why), compiled to BPF by internal/seccompbpf. docs/policy.md lists the
// same rows.
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

// rule is one row of the filter's table.
type rule struct {
	name   string // docs/policy.md names the rule so
	nr     uintptr
	when   []seccompbpf.Cond // all must hold; none: any arguments
	action uint32
	why    string
}

func argIs(arg int, values ...uint32) seccompbpf.Cond {
	return seccompbpf.Cond{Arg: arg, Test: seccompbpf.IsOneOf, Values: values}
}

func argMaskedIsNot(arg int, mask, v uint32) seccompbpf.Cond {
	return seccompbpf.Cond{Arg: arg, Mask: mask, Test: seccompbpf.IsNot, Values: []uint32{v}}
}

func argHasAny(arg int, bits uint32) seccompbpf.Cond {
	return seccompbpf.Cond{Arg: arg, Test: seccompbpf.HasAny, Values: []uint32{bits}}
}

func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

const (
	allow        uint32 = unix.SECCOMP_RET_ALLOW
	sockTypeMask        = 0xf // the kernel's SOCK_TYPE_MASK: the type without SOCK_CLOEXEC, SOCK_NONBLOCK
)

var rules = []rule{
	{"socket-unix", unix.SYS_SOCKET, []seccompbpf.Cond{argIs(0, unix.AF_UNIX)}, allow,
		"the sandbox's own unix sockets: the warden's filter sends every bind, connect and send with an address to the launcher, which lets a unix socket reach only a socket file the sandbox bound, or an abstract name in a network namespace of its own (ADR 0024)"},
	{"socket-inet", unix.SYS_SOCKET, []seccompbpf.Cond{argIs(0, unix.AF_INET, unix.AF_INET6), argMaskedIsNot(1, sockTypeMask, unix.SOCK_PACKET)}, allow,
		"the network, which the network namespace and the launcher's proxy confine; any type but SOCK_PACKET, with which AF_INET makes an AF_PACKET socket"},
	{"socket-netlink-route", unix.SYS_SOCKET, []seccompbpf.Cond{argIs(0, unix.AF_NETLINK), argIs(2, unix.NETLINK_ROUTE)}, allow,
		"addresses and routes of the sandbox's own network namespace, read by getaddrinfo (AI_ADDRCONFIG), getifaddrs, Go's net.Interfaces and ip"},
	{"socket-netlink-other", unix.SYS_SOCKET, []seccompbpf.Cond{argIs(0, unix.AF_NETLINK)}, errno(unix.EPROTONOSUPPORT),
		"the other netlink protocols are not needed, and some are not namespaced (audit, uevents, the process connector) or are large attack surfaces (netfilter, xfrm, generic netlink)"},
	{"socket-other", unix.SYS_SOCKET, nil, errno(unix.EAFNOSUPPORT),
		"every other family: vsock reaches the hypervisor and other VMs outside every network namespace; packet, alg, bluetooth, can, rds, tipc, xdp, kcm and the rest are not needed"},
	{"socketpair-unix", unix.SYS_SOCKETPAIR, []seccompbpf.Cond{argIs(0, unix.AF_UNIX)}, allow,
		"a connected pair reaches nothing outside, and shells and runtimes use it"},
	{"socketpair-other", unix.SYS_SOCKETPAIR, nil, errno(unix.EAFNOSUPPORT),
		"no other family is needed; tipc is the only other that makes pairs"},
	{"ioctl-terminal-injection", unix.SYS_IOCTL, []seccompbpf.Cond{argIs(1, unix.TIOCSTI, unix.TIOCLINUX)}, errno(unix.EPERM),
		"pushing keystrokes into the terminal outside"},
	{"keyctl", unix.SYS_KEYCTL, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"},
	{"add_key", unix.SYS_ADD_KEY, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"},
	{"request_key", unix.SYS_REQUEST_KEY, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"},
	{"unshare-user", unix.SYS_UNSHARE, []seccompbpf.Cond{argHasAny(0, unix.CLONE_NEWUSER)}, errno(unix.EPERM),
		"a nested user namespace hands out capabilities again"},
	{"clone-user", unix.SYS_CLONE, []seccompbpf.Cond{argHasAny(0, unix.CLONE_NEWUSER)}, errno(unix.EPERM),
		"a nested user namespace hands out capabilities again"},
	{"clone3", unix.SYS_CLONE3, nil, errno(unix.ENOSYS),
		"its flags are in memory, which a filter cannot read; ENOSYS makes libc fall back to clone"},
	{"io_uring_setup", unix.SYS_IO_URING_SETUP, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"},
	{"io_uring_enter", unix.SYS_IO_URING_ENTER, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"},
	{"io_uring_register", unix.SYS_IO_URING_REGISTER, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"},
}

// compile is the table's program: a call of any other ABI than the native
// one fails with EPERM, and one that no rule decides is allowed.
func compile(table []rule) ([]bpf.RawInstruction, error) {
	f := seccompbpf.Filter{Arch: nativeArch, SecondABI: x32Bit, Foreign: errno(unix.EPERM), Default: allow}
	for _, r := range table {
		f.Rules = append(f.Rules, seccompbpf.Rule{Nr: uint32(r.nr), When: r.when, Action: r.action})
	}
	return seccompbpf.Compile(f)
}

// SeccompProgram is the filter as bwrap's --seccomp expects it: an array of
// struct sock_filter in native byte order. The table is fixed, so a table
// that does not compile is a programming error that every test run finds.
func SeccompProgram() []byte {
	prog, err := compile(rules)
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
