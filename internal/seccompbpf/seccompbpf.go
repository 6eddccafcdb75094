// Package seccompbpf states a seccomp filter as a table of named rows
// (Table: the call, its argument conditions, the action, why) and compiles
// it to classic BPF. The sandbox's syscall filter (sandbox/seccomp.go) and
// the warden's (warden/filter.go) are both such tables; this is the one
// place that turns them into instructions (ADR 0035).
//
// The program it writes:
//   - a call of any other ABI than the native one gets Filter.Foreign
//     before any rule, since the rules are written in native syscall
//     numbers (x32 calls have x86-64's AUDIT_ARCH, and carry a bit in the
//     number instead: Filter.SecondABI);
//   - then come the rules, one block per syscall in the order of its first
//     rule: a block starts with a jump over itself for other syscalls (so
//     each costs them one instruction), tries the syscall's rules in table
//     order, the first whose conditions all hold deciding, and ends in a
//     return on every path;
//   - a call no rule decides gets Filter.Default.
//
// A condition reads one 32-bit half of an argument of struct seccomp_data.
// The low half is the first word on the little-endian architectures the
// filters are built for (amd64, arm64).
package seccompbpf

import (
	"fmt"
	"math"

	"golang.org/x/net/bpf"
)

// Filter is a whole filter as data.
type Filter struct {
	Arch      uint32 // the native ABI's AUDIT_ARCH_ value
	SecondABI uint32 // not 0: a call whose number is at least this (x32's bit) is of another ABI
	Foreign   uint32 // the action for a call of another ABI
	Rules     []Rule
	Default   uint32 // the action for a call no rule decides
}

// A Rule decides a call of syscall Nr whose arguments meet all of When.
type Rule struct {
	Nr     uint32
	When   []Cond // none: any arguments
	Action uint32 // a SECCOMP_RET_ value
}

// A Cond tests one 32-bit half of an argument, masked first when Mask is
// not 0.
type Cond struct {
	Arg    int  // 0 to 5
	High   bool // the high half, not the low
	Mask   uint32
	Test   Test
	Values []uint32
}

// Test is how a Cond compares.
type Test int

const (
	IsOneOf Test = iota // equals one of Values
	IsNot               // differs from Values[0], the only value
	HasAny              // has a bit of Values[0], the only value, set
)

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// Compile returns the filter's program. It fails only for a malformed
// table, or one whose block is too long for a BPF jump: the tables are
// fixed, so every test run finds that.
func Compile(f Filter) ([]bpf.RawInstruction, error) {
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: f.Arch, SkipTrue: 1},
		bpf.RetConstant{Val: f.Foreign},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
	if f.SecondABI != 0 {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: f.SecondABI, SkipFalse: 1},
			bpf.RetConstant{Val: f.Foreign})
	}
	var order []uint32
	byNr := map[uint32][]Rule{}
	for _, r := range f.Rules {
		if byNr[r.Nr] == nil {
			order = append(order, r.Nr)
		}
		byNr[r.Nr] = append(byNr[r.Nr], r)
	}
	for _, nr := range order {
		block, err := compileBlock(byNr[nr], f.Default)
		if err != nil {
			return nil, fmt.Errorf("syscall %d: %w", nr, err)
		}
		skip, err := jump(len(block))
		if err != nil {
			return nil, fmt.Errorf("syscall %d: %w", nr, err)
		}
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: skip})
		prog = append(prog, block...)
	}
	return bpf.Assemble(append(prog, bpf.RetConstant{Val: f.Default}))
}

// compileBlock is one syscall's rules, ending in a return on every path.
func compileBlock(rules []Rule, otherwise uint32) ([]bpf.Instruction, error) {
	var block []bpf.Instruction
	acc := unknown
	for _, r := range rules {
		code, failed, err := compileRule(r, acc)
		if err != nil {
			return nil, err
		}
		block = append(block, code...)
		acc = failed
	}
	if len(rules[len(rules)-1].When) > 0 {
		block = append(block, bpf.RetConstant{Val: otherwise}) // no rule of the syscall matched
	}
	return block, nil
}

// accumulator is what the BPF accumulator holds: the word of
// seccomp_data at off under a mask (0: none), or unknown.
type accumulator struct {
	off  uint32
	mask uint32
}

var unknown = accumulator{off: math.MaxUint32}

// A step is an instruction of a rule. A conditional jump's branch that
// fails the rule goes to the next rule: patch works out the offset once
// the rule's length is known.
type step struct {
	ins                     bpf.Instruction
	failOnTrue, failOnFalse bool
}

// compileRule emits a rule: its conditions, each jumping past the rule's
// return when it fails, then the return. It loads an argument only when
// the accumulator does not hold it already, and reports what the
// accumulator holds when the rule does not match (the next rule starts
// from there).
func compileRule(r Rule, acc accumulator) ([]bpf.Instruction, accumulator, error) {
	var steps []step
	failed := unknown // a rule without conditions always matches
	for i, c := range r.When {
		if c.Arg < 0 || c.Arg > 5 {
			return nil, unknown, fmt.Errorf("argument %d: a syscall has arguments 0 to 5", c.Arg)
		}
		steps = append(steps, load(&acc, c)...)
		checks, err := check(c)
		if err != nil {
			return nil, unknown, err
		}
		steps = append(steps, checks...)
		if i == 0 {
			failed = acc
		} else if acc != failed {
			failed = unknown
		}
	}
	steps = append(steps, step{ins: bpf.RetConstant{Val: r.Action}})
	code, err := patch(steps)
	return code, failed, err
}

// load brings the condition's word, masked, into the accumulator, unless
// it is there already.
func load(acc *accumulator, c Cond) []step {
	want := accumulator{off: offArgs + 8*uint32(c.Arg), mask: c.Mask}
	if c.High {
		want.off += 4
	}
	if *acc == want {
		return nil
	}
	var out []step
	if acc.off != want.off || acc.mask != 0 {
		out = append(out, step{ins: bpf.LoadAbsolute{Off: want.off, Size: 4}})
	}
	if c.Mask != 0 {
		out = append(out, step{ins: bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: c.Mask}})
	}
	*acc = want
	return out
}

// check goes on to the next instruction when the accumulator passes c,
// and fails the rule when it does not.
func check(c Cond) ([]step, error) {
	if len(c.Values) == 0 || c.Test != IsOneOf && len(c.Values) != 1 {
		return nil, fmt.Errorf("test %d of argument %d with %d values", c.Test, c.Arg, len(c.Values))
	}
	switch c.Test {
	case IsOneOf:
		var out []step
		last := len(c.Values) - 1
		for j, v := range c.Values[:last] {
			toNextCond, err := jump(last - j)
			if err != nil {
				return nil, err
			}
			out = append(out, step{ins: bpf.JumpIf{Cond: bpf.JumpEqual, Val: v, SkipTrue: toNextCond}})
		}
		return append(out, step{ins: bpf.JumpIf{Cond: bpf.JumpEqual, Val: c.Values[last]}, failOnFalse: true}), nil
	case IsNot:
		return []step{{ins: bpf.JumpIf{Cond: bpf.JumpEqual, Val: c.Values[0]}, failOnTrue: true}}, nil
	case HasAny:
		return []step{{ins: bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: c.Values[0]}, failOnFalse: true}}, nil
	}
	return nil, fmt.Errorf("unknown test %d", c.Test)
}

// patch points the branches that fail the rule past its return, its last
// instruction.
func patch(steps []step) ([]bpf.Instruction, error) {
	code := make([]bpf.Instruction, len(steps))
	for i, s := range steps {
		code[i] = s.ins
		if !s.failOnTrue && !s.failOnFalse {
			continue
		}
		past, err := jump(len(steps) - 1 - i)
		if err != nil {
			return nil, err
		}
		j := s.ins.(bpf.JumpIf)
		if s.failOnTrue {
			j.SkipTrue = past
		}
		if s.failOnFalse {
			j.SkipFalse = past
		}
		code[i] = j
	}
	return code, nil
}

// jump is a BPF jump offset, which has 8 bits.
func jump(n int) (uint8, error) {
	if n < 0 || n > 255 {
		return 0, fmt.Errorf("a jump of %d instructions does not fit BPF", n)
	}
	return uint8(n), nil
}
