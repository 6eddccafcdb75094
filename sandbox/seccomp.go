package sandbox

import (
	"encoding/binary"
	"fmt"

	"github.com/claude-sandbox/claude-sandbox/internal/seccompbpf"
	"golang.org/x/sys/unix"
)

// The seccomp filter bwrap installs before it runs Claude. It closes what the
// mount and namespace setup cannot, and it is written as data: the table
// seccompFilter below, one row per rule (name, syscall, argument condition,
// action, why), in the form of the warden's table (seccompbpf.Table),
// compiled to BPF by internal/seccompbpf. The plan holds it,
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

// SeccompFilter is the sandbox's syscall filter as data, in the form the
// warden's filter takes too (warden.Filter): what the plan holds,
// `argv --explain` prints, and SeccompProgram compiles.
type SeccompFilter = seccompbpf.Table

func errno(e unix.Errno) seccompbpf.Action { return seccompbpf.Errno(e) }

const allow = seccompbpf.Allow

// row is a row of the table, its fields in table order.
func row(name string, sys seccompbpf.Syscall, when []seccompbpf.ArgCond, action seccompbpf.Action, why string) seccompbpf.Row {
	return seccompbpf.Row{Name: name, Syscall: sys, When: when, Action: action, Why: why}
}

// The syscalls, arguments and values the rules name.
var (
	sysSocket     = seccompbpf.Syscall{Name: "socket", Nr: unix.SYS_SOCKET}
	sysSocketpair = seccompbpf.Syscall{Name: "socketpair", Nr: unix.SYS_SOCKETPAIR}

	argFamily   = seccompbpf.Arg{N: 0, Name: "family"}
	argType     = seccompbpf.Arg{N: 1, Name: "type"}
	argProtocol = seccompbpf.Arg{N: 2, Name: "protocol"}
	argRequest  = seccompbpf.Arg{N: 1, Name: "request"} // ioctl's
	argFlags    = seccompbpf.Arg{N: 0, Name: "flags"}   // unshare's and clone's

	afUnix       = seccompbpf.Value{Name: "AF_UNIX", Value: unix.AF_UNIX}
	afInet       = seccompbpf.Value{Name: "AF_INET", Value: unix.AF_INET}
	afInet6      = seccompbpf.Value{Name: "AF_INET6", Value: unix.AF_INET6}
	afNetlink    = seccompbpf.Value{Name: "AF_NETLINK", Value: unix.AF_NETLINK}
	netlinkRoute = seccompbpf.Value{Name: "NETLINK_ROUTE", Value: unix.NETLINK_ROUTE}
	sockPacket   = seccompbpf.Value{Name: "SOCK_PACKET", Value: unix.SOCK_PACKET}
	sockTypeMask = seccompbpf.Value{Name: "SOCK_TYPE_MASK", Value: 0xf} // the type without SOCK_CLOEXEC, SOCK_NONBLOCK
	tiocsti      = seccompbpf.Value{Name: "TIOCSTI", Value: unix.TIOCSTI}
	tioclinux    = seccompbpf.Value{Name: "TIOCLINUX", Value: unix.TIOCLINUX}
	cloneNewUser = seccompbpf.Value{Name: "CLONE_NEWUSER", Value: unix.CLONE_NEWUSER}
)

var seccompFilter = SeccompFilter{
	Name:     "seccomp",
	OtherABI: errno(unix.EPERM), OtherABIWhy: "the rules are written in native syscall numbers",
	Otherwise: allow, OtherwiseWhy: "the mounts, the namespaces and the warden confine the rest; this filter closes what they cannot",
	Rows: []seccompbpf.Row{
		row("socket-unix", sysSocket, []seccompbpf.ArgCond{seccompbpf.ArgIs(argFamily, afUnix)}, allow,
			"the sandbox's own unix sockets: the warden's filter sends every bind, connect and send with an address to the launcher, which lets a unix socket reach only a socket file the sandbox bound, or an abstract name in a network namespace of its own (ADR 0024)"),
		row("socket-inet", sysSocket, []seccompbpf.ArgCond{seccompbpf.ArgIs(argFamily, afInet, afInet6), seccompbpf.ArgMaskedIsNot(argType, sockTypeMask, sockPacket)}, allow,
			"the network, which the network namespace and the launcher's proxy confine; any type but SOCK_PACKET, with which AF_INET makes an AF_PACKET socket"),
		row("socket-netlink-route", sysSocket, []seccompbpf.ArgCond{seccompbpf.ArgIs(argFamily, afNetlink), seccompbpf.ArgIs(argProtocol, netlinkRoute)}, allow,
			"addresses and routes of the sandbox's own network namespace, read by getaddrinfo (AI_ADDRCONFIG), getifaddrs, Go's net.Interfaces and ip"),
		row("socket-netlink-other", sysSocket, []seccompbpf.ArgCond{seccompbpf.ArgIs(argFamily, afNetlink)}, errno(unix.EPROTONOSUPPORT),
			"the other netlink protocols are not needed, and some are not namespaced (audit, uevents, the process connector) or are large attack surfaces (netfilter, xfrm, generic netlink)"),
		row("socket-other", sysSocket, nil, errno(unix.EAFNOSUPPORT),
			"every other family: vsock reaches the hypervisor and other VMs outside every network namespace; packet, alg, bluetooth, can, rds, tipc, xdp, kcm and the rest are not needed"),
		row("socketpair-unix", sysSocketpair, []seccompbpf.ArgCond{seccompbpf.ArgIs(argFamily, afUnix)}, allow,
			"a connected pair reaches nothing outside, and shells and runtimes use it"),
		row("socketpair-other", sysSocketpair, nil, errno(unix.EAFNOSUPPORT),
			"no other family is needed; tipc is the only other that makes pairs"),
		row("ioctl-terminal-injection", seccompbpf.Syscall{Name: "ioctl", Nr: unix.SYS_IOCTL}, []seccompbpf.ArgCond{seccompbpf.ArgIs(argRequest, tiocsti, tioclinux)}, errno(unix.EPERM),
			"pushing keystrokes into the terminal outside"),
		row("keyctl", seccompbpf.Syscall{Name: "keyctl", Nr: unix.SYS_KEYCTL}, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"),
		row("add_key", seccompbpf.Syscall{Name: "add_key", Nr: unix.SYS_ADD_KEY}, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"),
		row("request_key", seccompbpf.Syscall{Name: "request_key", Nr: unix.SYS_REQUEST_KEY}, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"),
		row("unshare-user", seccompbpf.Syscall{Name: "unshare", Nr: unix.SYS_UNSHARE}, []seccompbpf.ArgCond{seccompbpf.ArgHasAny(argFlags, cloneNewUser)}, errno(unix.EPERM),
			"a nested user namespace hands out capabilities again"),
		row("clone-user", seccompbpf.Syscall{Name: "clone", Nr: unix.SYS_CLONE}, []seccompbpf.ArgCond{seccompbpf.ArgHasAny(argFlags, cloneNewUser)}, errno(unix.EPERM),
			"a nested user namespace hands out capabilities again"),
		row("clone3", seccompbpf.Syscall{Name: "clone3", Nr: unix.SYS_CLONE3}, nil, errno(unix.ENOSYS),
			"its flags are in memory, which a filter cannot read; ENOSYS makes libc fall back to clone"),
		row("io_uring_setup", seccompbpf.Syscall{Name: "io_uring_setup", Nr: unix.SYS_IO_URING_SETUP}, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"),
		row("io_uring_enter", seccompbpf.Syscall{Name: "io_uring_enter", Nr: unix.SYS_IO_URING_ENTER}, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"),
		row("io_uring_register", seccompbpf.Syscall{Name: "io_uring_register", Nr: unix.SYS_IO_URING_REGISTER}, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"),
	}}

// SeccompProgram is the filter as bwrap's --seccomp expects it: an array of
// struct sock_filter in native byte order. The table is fixed, so a table
// that does not compile is a programming error that every test run finds.
func SeccompProgram() []byte {
	prog, err := seccompFilter.Program(nativeArch, x32Bit)
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
