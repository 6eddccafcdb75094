package seccompbpf

import (
	"testing"
)

const (
	native   = 0xc000003e // AUDIT_ARCH_X86_64
	i386     = 0x40000003 // AUDIT_ARCH_I386
	x32      = 0x40000000
	allow    = 0x7fff0000 // SECCOMP_RET_ALLOW
	eperm    = 0x00050001 // SECCOMP_RET_ERRNO | EPERM
	notify   = 0x7fc00000 // SECCOMP_RET_USER_NOTIF
	refuseA  = 0x00050002
	refuseB  = 0x00050003
	refuseC  = 0x00050004
	sameArgX = 0x00050005
	sameArgY = 0x00050006
)

var filter = Filter{
	Arch: native, SecondABI: x32, Foreign: eperm, Default: allow,
	Rules: []Rule{
		{Nr: 1, When: []Cond{{Arg: 0, Test: IsOneOf, Values: []uint32{1, 2}}, {Arg: 1, Mask: 0xf, Test: IsNot, Values: []uint32{10}}}, Action: refuseA},
		{Nr: 2, When: []Cond{{Arg: 0, Test: HasAny, Values: []uint32{0x10000000}}}, Action: refuseB},
		{Nr: 1, When: []Cond{{Arg: 0, Test: IsOneOf, Values: []uint32{10}}, {Arg: 2, Test: IsOneOf, Values: []uint32{0}}}, Action: allow},
		{Nr: 1, Action: refuseC},
		{Nr: 3, When: []Cond{{Arg: 4, Test: IsOneOf, Values: []uint32{0}}, {Arg: 4, High: true, Test: IsOneOf, Values: []uint32{0}}}, Action: allow},
		{Nr: 3, Action: notify},
		{Nr: 4, When: []Cond{{Arg: 1, Test: IsOneOf, Values: []uint32{5}}}, Action: sameArgX},
		{Nr: 4, When: []Cond{{Arg: 1, Test: IsOneOf, Values: []uint32{6}}}, Action: sameArgY},
		{Nr: 5, When: []Cond{{Arg: 1, Mask: 0xf, Test: IsNot, Values: []uint32{10}}}, Action: sameArgX},
		{Nr: 5, When: []Cond{{Arg: 1, Test: IsOneOf, Values: []uint32{0x80a}}}, Action: sameArgY},
	},
}

func TestCompileDecides(t *testing.T) {
	prog, err := Compile(filter)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call Call
		want uint32
	}{
		{"other arch", Call{Arch: i386, Nr: 1, Args: [6]uint64{1}}, eperm},
		{"other arch, no rule", Call{Arch: i386, Nr: 99}, eperm},
		{"second ABI", Call{Arch: native, Nr: x32 | 99}, eperm},
		{"no rule", Call{Arch: native, Nr: 99}, allow},
		{"one of, first value, masked not", Call{Arch: native, Nr: 1, Args: [6]uint64{1, 0x801}}, refuseA},
		{"one of, last value, masked not", Call{Arch: native, Nr: 1, Args: [6]uint64{2, 3}}, refuseA},
		{"one of, high half ignored", Call{Arch: native, Nr: 1, Args: [6]uint64{1<<32 | 2, 3}}, refuseA},
		{"masked is the value", Call{Arch: native, Nr: 1, Args: [6]uint64{2, 0x80a}}, refuseC},
		{"second rule", Call{Arch: native, Nr: 1, Args: [6]uint64{10, 10, 0}}, allow},
		{"second rule's second condition fails", Call{Arch: native, Nr: 1, Args: [6]uint64{10, 10, 1}}, refuseC},
		{"first rule failed on another argument: the next loads its own", Call{Arch: native, Nr: 1, Args: [6]uint64{1, 10, 0}}, refuseC},
		{"none of the values", Call{Arch: native, Nr: 1, Args: [6]uint64{3}}, refuseC},
		{"has a bit", Call{Arch: native, Nr: 2, Args: [6]uint64{0x10000001}}, refuseB},
		{"has no bit", Call{Arch: native, Nr: 2, Args: [6]uint64{0x20000001}}, allow},
		{"has the bit in the high half only", Call{Arch: native, Nr: 2, Args: [6]uint64{0x10000000 << 32}}, allow},
		{"64-bit zero", Call{Arch: native, Nr: 3, Args: [6]uint64{4: 0}}, allow},
		{"64-bit, low half not zero", Call{Arch: native, Nr: 3, Args: [6]uint64{4: 0x1000}}, notify},
		{"64-bit, high half not zero", Call{Arch: native, Nr: 3, Args: [6]uint64{4: 0x7f00_0000_0000}}, notify},
		{"same argument, first rule", Call{Arch: native, Nr: 4, Args: [6]uint64{1: 5}}, sameArgX},
		{"same argument, second rule", Call{Arch: native, Nr: 4, Args: [6]uint64{1: 6}}, sameArgY},
		{"same argument, no rule", Call{Arch: native, Nr: 4, Args: [6]uint64{1: 7}}, allow},
		{"masked, then whole: masked passes", Call{Arch: native, Nr: 5, Args: [6]uint64{1: 3}}, sameArgX},
		{"masked, then whole: whole loaded again", Call{Arch: native, Nr: 5, Args: [6]uint64{1: 0x80a}}, sameArgY},
		{"masked, then whole: neither", Call{Arch: native, Nr: 5, Args: [6]uint64{1: 0x81a}}, allow},
	} {
		got, err := Run(prog, tc.call)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s: got %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

// A syscall's rules cost other syscalls one instruction, and a rule that
// reads the argument the previous one failed on does not load it again.
func TestCompileLength(t *testing.T) {
	prog, err := Compile(Filter{Arch: native, Foreign: eperm, Default: allow, Rules: []Rule{
		{Nr: 4, When: []Cond{{Arg: 1, Test: IsOneOf, Values: []uint32{5}}}, Action: sameArgX},
		{Nr: 4, When: []Cond{{Arg: 1, Test: IsOneOf, Values: []uint32{6}}}, Action: sameArgY},
		{Nr: 5, Action: eperm},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// 4 for the architecture; jeq 4, ld, jeq 5, ret, jeq 6, ret, ret; jeq 5, ret; ret.
	if len(prog) != 4+7+2+1 {
		t.Errorf("%d instructions, want 14", len(prog))
	}
}

func TestCompileRefusesMalformed(t *testing.T) {
	many := make([]Rule, 130)
	for i := range many {
		many[i] = Rule{Nr: 1, When: []Cond{{Arg: 0, Test: IsOneOf, Values: []uint32{uint32(i)}}}, Action: eperm}
	}
	for name, rules := range map[string][]Rule{
		"argument 6":           {{Nr: 1, When: []Cond{{Arg: 6, Test: IsOneOf, Values: []uint32{1}}}}},
		"no values":            {{Nr: 1, When: []Cond{{Arg: 0, Test: IsOneOf}}}},
		"is not two values":    {{Nr: 1, When: []Cond{{Arg: 0, Test: IsNot, Values: []uint32{1, 2}}}}},
		"has any of two words": {{Nr: 1, When: []Cond{{Arg: 0, Test: HasAny, Values: []uint32{1, 2}}}}},
		"unknown test":         {{Nr: 1, When: []Cond{{Arg: 0, Test: Test(7), Values: []uint32{1}}}}},
		"block too long":       many,
	} {
		if _, err := Compile(Filter{Arch: native, Rules: rules}); err == nil {
			t.Errorf("%s: compiled", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
