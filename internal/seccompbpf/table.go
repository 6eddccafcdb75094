package seccompbpf

import (
	"fmt"
	"strings"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// A Table is a seccomp filter as the project states it: rows that name the
// call, its argument conditions, the action and why. Both filters of a
// session are tables, the sandbox's (sandbox/seccomp.go, installed by
// bwrap) and the warden's (warden/filter.go, installed by init);
// `argv --explain` prints each one (Explain), docs/policy.md has a table
// of each, and Program compiles it.
type Table struct {
	Name      string // what argv --explain starts the table's lines with
	OtherABI  Action // a call of any other ABI than the native one
	Rows      []Row
	Otherwise Action // a call no row decides
	// Why the table answers a call of another ABI, and one no row decides,
	// as it does.
	OtherABIWhy, OtherwiseWhy string
}

// A Row is one rule of a table: a call of Syscall whose arguments meet all
// of When gets Action. A call's rows are tried in table order.
type Row struct {
	Name    string // unique in its table; docs/policy.md names the row so
	Syscall Syscall
	When    []ArgCond // all must hold; none: any arguments
	Action  Action
	Why     string
}

// A Syscall is a system call by its name and native number.
type Syscall struct {
	Name string
	Nr   uint32
}

// An ArgCond tests a 32-bit half of an argument, masked first when
// Mask.Value is not 0. HasAny holds when the argument has a bit of any of
// Values set.
type ArgCond struct {
	Arg    Arg
	Mask   Value
	Test   Test
	Values []Value
}

// An Arg is a 32-bit half of an argument, by position and by what it is:
// the low half unless High.
type Arg struct {
	N    int
	High bool
	Name string
}

// A Value is a number the rows use, by the name C gives it.
type Value struct {
	Name  string
	Value uint32
}

// Action is what the filter answers: a SECCOMP_RET_ value.
type Action uint32

// The actions the tables use.
const (
	Allow  Action = unix.SECCOMP_RET_ALLOW
	Notify Action = unix.SECCOMP_RET_USER_NOTIF // the warden decides, outside
)

// Errno is the action that fails a call with e.
func Errno(e unix.Errno) Action { return unix.SECCOMP_RET_ERRNO | Action(e) }

func (a Action) String() string {
	switch {
	case a == Allow:
		return "allow"
	case a == Notify:
		return "notify"
	case a&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO:
		return unix.ErrnoName(unix.Errno(a & unix.SECCOMP_RET_DATA))
	}
	return fmt.Sprintf("%#x", uint32(a))
}

// ArgIs holds when the argument is one of values.
func ArgIs(arg Arg, values ...Value) ArgCond {
	return ArgCond{Arg: arg, Test: IsOneOf, Values: values}
}

// ArgMaskedIsNot holds when the argument, masked, is not v.
func ArgMaskedIsNot(arg Arg, mask, v Value) ArgCond {
	return ArgCond{Arg: arg, Mask: mask, Test: IsNot, Values: []Value{v}}
}

// ArgHasAny holds when the argument has a bit of any of bits set.
func ArgHasAny(arg Arg, bits ...Value) ArgCond {
	return ArgCond{Arg: arg, Test: HasAny, Values: bits}
}

// Explain is the table as `argv --explain` shows it: one line a row (the
// calls it decides, its action, why), after the line for other ABIs and
// before the line for the calls no row decides.
func (t Table) Explain() []string {
	out := []string{fmt.Sprintf("%s other-abi any call of another ABI than the native one (i386, x32, arm32) %s: %s", t.Name, t.OtherABI, t.OtherABIWhy)}
	for _, r := range t.Rows {
		calls := r.Syscall.Name
		if len(r.When) > 0 {
			conds := make([]string, len(r.When))
			for i, c := range r.When {
				conds[i] = c.String()
			}
			calls += "(" + strings.Join(conds, ", ") + ")"
		}
		out = append(out, fmt.Sprintf("%s %s %s %s: %s", t.Name, r.Name, calls, r.Action, r.Why))
	}
	return append(out, fmt.Sprintf("%s otherwise any other call %s: %s", t.Name, t.Otherwise, t.OtherwiseWhy))
}

// String is the condition as the docs write it: "family AF_INET or
// AF_INET6", "type&SOCK_TYPE_MASK not SOCK_PACKET", "flags with
// CLONE_NEWUSER".
func (c ArgCond) String() string {
	arg := c.Arg.Name
	if c.Mask.Value != 0 {
		arg += "&" + c.Mask.Name
	}
	names := make([]string, len(c.Values))
	for i, v := range c.Values {
		names[i] = v.Name
	}
	test := map[Test]string{IsOneOf: " ", IsNot: " not ", HasAny: " with "}[c.Test]
	return arg + test + strings.Join(names, " or ")
}

// Filter is the table in numbers, for a native ABI of arch whose calls of
// a second ABI carry secondABI in their numbers (0: none). A HasAny
// condition's values become one mask.
func (t Table) Filter(arch, secondABI uint32) Filter {
	out := Filter{Arch: arch, SecondABI: secondABI, Foreign: uint32(t.OtherABI), Default: uint32(t.Otherwise)}
	for _, r := range t.Rows {
		rule := Rule{Nr: r.Syscall.Nr, Action: uint32(r.Action)}
		for _, c := range r.When {
			var values []uint32
			for _, v := range c.Values {
				values = append(values, v.Value)
			}
			if c.Test == HasAny {
				var bits uint32
				for _, v := range values {
					bits |= v
				}
				values = []uint32{bits}
			}
			rule.When = append(rule.When, Cond{Arg: c.Arg.N, High: c.Arg.High, Mask: c.Mask.Value, Test: c.Test, Values: values})
		}
		out.Rules = append(out.Rules, rule)
	}
	return out
}

// Program is the table's program: Filter, compiled.
func (t Table) Program(arch, secondABI uint32) ([]bpf.RawInstruction, error) {
	return Compile(t.Filter(arch, secondABI))
}
