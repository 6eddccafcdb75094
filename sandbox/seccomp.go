package sandbox

import (
	"encoding/binary"
	"fmt"

	"github.com/claude-sandbox/claude-sandbox/internal/seccompbpf"
	"golang.org/x/sys/unix"
)

// The seccomp filter bwrap installs before it runs Claude. It closes what the
// mount and namespace setup cannot, and it is written as data: the table
// `rules` below, one row per rule (name, syscall, argument condition, action,
// why), compiled to BPF by compile. docs/policy.md lists the same rows.
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
	when   []cond // all must hold; none: any arguments
	action uint32
	why    string
}

// cond tests one argument: its low 32 bits, masked when mask is not 0.
type cond struct {
	arg    int
	mask   uint32
	test   test
	values []uint32
}

type test int

const (
	isOneOf test = iota // equals one of values
	isNot               // differs from values[0]
	hasAny              // has any bit of values[0] set
)

func argIs(arg int, values ...uint32) cond {
	return cond{arg: arg, test: isOneOf, values: values}
}

func argMaskedIsNot(arg int, mask, v uint32) cond {
	return cond{arg: arg, mask: mask, test: isNot, values: []uint32{v}}
}

func argHasAny(arg int, bits uint32) cond {
	return cond{arg: arg, test: hasAny, values: []uint32{bits}}
}

func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

const (
	allow        uint32 = unix.SECCOMP_RET_ALLOW
	sockTypeMask        = 0xf // the kernel's SOCK_TYPE_MASK: the type without SOCK_CLOEXEC, SOCK_NONBLOCK
)

var rules = []rule{
	{"socket-unix", unix.SYS_SOCKET, []cond{argIs(0, unix.AF_UNIX)}, allow,
		"the sandbox's own unix sockets: the warden's filter sends every bind, connect and send with an address to the launcher, which lets a unix socket reach only a socket file the sandbox bound, or an abstract name in a network namespace of its own (ADR 0024)"},
	{"socket-inet", unix.SYS_SOCKET, []cond{argIs(0, unix.AF_INET, unix.AF_INET6), argMaskedIsNot(1, sockTypeMask, unix.SOCK_PACKET)}, allow,
		"the network, which the network namespace and the launcher's proxy confine; any type but SOCK_PACKET, with which AF_INET makes an AF_PACKET socket"},
	{"socket-netlink-route", unix.SYS_SOCKET, []cond{argIs(0, unix.AF_NETLINK), argIs(2, unix.NETLINK_ROUTE)}, allow,
		"addresses and routes of the sandbox's own network namespace, read by getaddrinfo (AI_ADDRCONFIG), getifaddrs, Go's net.Interfaces and ip"},
	{"socket-netlink-other", unix.SYS_SOCKET, []cond{argIs(0, unix.AF_NETLINK)}, errno(unix.EPROTONOSUPPORT),
		"the other netlink protocols are not needed, and some are not namespaced (audit, uevents, the process connector) or are large attack surfaces (netfilter, xfrm, generic netlink)"},
	{"socket-other", unix.SYS_SOCKET, nil, errno(unix.EAFNOSUPPORT),
		"every other family: vsock reaches the hypervisor and other VMs outside every network namespace; packet, alg, bluetooth, can, rds, tipc, xdp, kcm and the rest are not needed"},
	{"socketpair-unix", unix.SYS_SOCKETPAIR, []cond{argIs(0, unix.AF_UNIX)}, allow,
		"a connected pair reaches nothing outside, and shells and runtimes use it"},
	{"socketpair-other", unix.SYS_SOCKETPAIR, nil, errno(unix.EAFNOSUPPORT),
		"no other family is needed; tipc is the only other that makes pairs"},
	{"ioctl-terminal-injection", unix.SYS_IOCTL, []cond{argIs(1, unix.TIOCSTI, unix.TIOCLINUX)}, errno(unix.EPERM),
		"pushing keystrokes into the terminal outside"},
	{"keyctl", unix.SYS_KEYCTL, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"},
	{"add_key", unix.SYS_ADD_KEY, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"},
	{"request_key", unix.SYS_REQUEST_KEY, nil, errno(unix.EPERM), "the kernel keyrings are not namespaced"},
	{"unshare-user", unix.SYS_UNSHARE, []cond{argHasAny(0, unix.CLONE_NEWUSER)}, errno(unix.EPERM),
		"a nested user namespace hands out capabilities again"},
	{"clone-user", unix.SYS_CLONE, []cond{argHasAny(0, unix.CLONE_NEWUSER)}, errno(unix.EPERM),
		"a nested user namespace hands out capabilities again"},
	{"clone3", unix.SYS_CLONE3, nil, errno(unix.ENOSYS),
		"its flags are in memory, which a filter cannot read; ENOSYS makes libc fall back to clone"},
	{"io_uring_setup", unix.SYS_IO_URING_SETUP, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"},
	{"io_uring_enter", unix.SYS_IO_URING_ENTER, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"},
	{"io_uring_register", unix.SYS_IO_URING_REGISTER, nil, errno(unix.EPERM), "io_uring's operations (socket, connect, openat) bypass this filter"},
}

type insn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

const (
	ldAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	andK   = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jge    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	jset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	retK   = unix.BPF_RET | unix.BPF_K
	offNr  = 0
	offArc = 4
)

func offArg(i int) uint32 { return 16 + 8*uint32(i) } // low 32 bits on little-endian

func ret(v uint32) insn { return insn{code: retK, k: v} }

// filter is the whole program: the ABI checks, then the rules. at[i] is the
// index of rule i's return instruction, so a test can tell which rule
// answered.
func filter() (prog []insn, at []int) {
	prog = []insn{{code: ldAbs, k: offArc}, {code: jeq, k: nativeArch, jt: 1}, ret(errno(unix.EPERM)), {code: ldAbs, k: offNr}}
	if x32Bit != 0 {
		prog = append(prog, insn{code: jge, k: x32Bit, jf: 1}, ret(errno(unix.EPERM)))
	}
	body, at := compile(rules)
	for i := range at {
		at[i] += len(prog)
	}
	return append(append(prog, body...), ret(allow)), at
}

// compile turns the table into BPF that starts and ends with the syscall
// number in the accumulator: one block per syscall, in the order of its
// first rule. A block starts with a jump over itself for other syscalls
// (so each costs them one instruction) and ends in a return on every path.
// The table is fixed, so a block too long for a BPF jump is a programming
// error that every test run finds.
func compile(table []rule) (prog []insn, at []int) {
	at = make([]int, len(table))
	var order []uintptr
	byNr := map[uintptr][]int{}
	for i, r := range table {
		if byNr[r.nr] == nil {
			order = append(order, r.nr)
		}
		byNr[r.nr] = append(byNr[r.nr], i)
	}
	for _, nr := range order {
		var block []insn
		acc := unknown
		for _, i := range byNr[nr] {
			code, after := compileRule(table[i], acc)
			block = append(block, code...)
			at[i] = len(prog) + 1 + len(block) - 1
			acc = after
		}
		if last := table[byNr[nr][len(byNr[nr])-1]]; len(last.when) > 0 {
			block = append(block, ret(allow)) // no rule of this syscall matched
		}
		prog = append(prog, insn{code: jeq, k: uint32(nr), jf: jump(len(block))})
		prog = append(prog, block...)
	}
	return prog, at
}

// accumulator is what the BPF accumulator holds: an argument's low 32 bits
// under a mask, or unknown.
type accumulator struct {
	arg  int
	mask uint32
}

var unknown = accumulator{arg: -1}

// compileRule emits one rule: its conditions, each jumping past the rule's
// return when it fails, then the return. It loads an argument only when the
// accumulator does not hold it already, and reports what the accumulator
// holds when the rule does not match (the next rule starts from there).
func compileRule(r rule, acc accumulator) (code []insn, failed accumulator) {
	var out []jumping
	var states []accumulator // the accumulator where each condition can fail
	for _, c := range r.when {
		out = append(out, load(&acc, c)...)
		out = append(out, check(c)...)
		states = append(states, acc)
	}
	out = append(out, jumping{insn: ret(r.action)})
	return patch(out), failedState(states)
}

// A jumping instruction jumps by instructions, or to the rule after this
// one (toNext), which patch turns into offsets.
type jumping struct {
	insn
	onTrue, onFalse int
}

const toNext = -1

// load brings the condition's argument, masked, into the accumulator,
// unless it is there already.
func load(acc *accumulator, c cond) []jumping {
	want := accumulator{c.arg, c.mask}
	if *acc == want {
		return nil
	}
	var out []jumping
	if acc.arg != c.arg || acc.mask != 0 {
		out = append(out, jumping{insn: insn{code: ldAbs, k: offArg(c.arg)}})
	}
	if c.mask != 0 {
		out = append(out, jumping{insn: insn{code: andK, k: c.mask}})
	}
	*acc = want
	return out
}

// check goes on to the next condition when the accumulator passes c, and to
// the next rule when it fails.
func check(c cond) []jumping {
	switch c.test {
	case isOneOf:
		var out []jumping
		for j, v := range c.values {
			if j < len(c.values)-1 {
				out = append(out, jumping{insn: insn{code: jeq, k: v}, onTrue: len(c.values) - 1 - j})
			} else {
				out = append(out, jumping{insn: insn{code: jeq, k: v}, onFalse: toNext})
			}
		}
		return out
	case isNot:
		return []jumping{{insn: insn{code: jeq, k: c.values[0]}, onTrue: toNext}}
	case hasAny:
		return []jumping{{insn: insn{code: jset, k: c.values[0]}, onFalse: toNext}}
	}
	return nil
}

// patch turns the jumps to the next rule into offsets past the rule's
// return, its last instruction.
func patch(out []jumping) []insn {
	code := make([]insn, len(out))
	for i, j := range out {
		pastReturn := len(out) - 1 - i
		if j.onTrue == toNext {
			j.onTrue = pastReturn
		}
		if j.onFalse == toNext {
			j.onFalse = pastReturn
		}
		code[i] = j.insn
		code[i].jt, code[i].jf = jump(j.onTrue), jump(j.onFalse)
	}
	return code
}

// failedState is what the accumulator holds when the rule does not match:
// the same at every condition, or unknown.
func failedState(states []accumulator) accumulator {
	failed := unknown // a rule without conditions always matches
	for i, s := range states {
		if i == 0 {
			failed = s
		} else if s != failed {
			failed = unknown
		}
	}
	return failed
}

// jump is a BPF jump offset, which has 8 bits.
func jump(n int) uint8 {
	if n < 0 || n > 255 {
		panic(fmt.Sprintf("seccomp rules: a jump of %d instructions does not fit BPF", n))
	}
	return uint8(n)
}

// SeccompProgram is the filter as bwrap's --seccomp expects it: an array of
// struct sock_filter in native byte order.
func SeccompProgram() []byte {
	prog, _ := filter()
	out := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		out = binary.NativeEndian.AppendUint16(out, in.code)
		out = append(out, in.jt, in.jf)
		out = binary.NativeEndian.AppendUint32(out, in.k)
	}
	return out
}

// seccompFilter is the table as internal/seccompbpf compiles it.
func seccompFilter() seccompbpf.Filter {
	f := seccompbpf.Filter{Arch: nativeArch, SecondABI: x32Bit, Foreign: errno(unix.EPERM), Default: allow}
	tests := map[test]seccompbpf.Test{isOneOf: seccompbpf.IsOneOf, isNot: seccompbpf.IsNot, hasAny: seccompbpf.HasAny}
	for _, r := range rules {
		rule := seccompbpf.Rule{Nr: uint32(r.nr), Action: r.action}
		for _, c := range r.when {
			rule.When = append(rule.When, seccompbpf.Cond{Arg: c.arg, Mask: c.mask, Test: tests[c.test], Values: c.values})
		}
		f.Rules = append(f.Rules, rule)
	}
	return f
}

// compiledProgram is SeccompProgram, compiled by internal/seccompbpf.
func compiledProgram() []byte {
	prog, err := seccompbpf.Compile(seccompFilter())
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
