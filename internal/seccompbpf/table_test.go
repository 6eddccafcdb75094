package seccompbpf

import (
	"reflect"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

var (
	sysOpen = Syscall{Name: "open", Nr: 2}
	sysSend = Syscall{Name: "sendto", Nr: 44}
	argAddr = Arg{N: 4, Name: "addr"}
	argHigh = Arg{N: 4, High: true, Name: "addr>>32"}
	null    = Value{Name: "NULL", Value: 0}
)

var table = Table{
	Name:     "test",
	OtherABI: Errno(unix.EPERM), OtherABIWhy: "native numbers",
	Otherwise: Allow, OtherwiseWhy: "the rest",
	Rows: []Row{
		{Name: "open-writes", Syscall: sysOpen, When: []ArgCond{ArgHasAny(Arg{N: 1, Name: "flags"}, Value{"O_WRONLY", 1}, Value{"O_CREAT", 0x40})}, Action: Notify, Why: "writes"},
		{Name: "send-none", Syscall: sysSend, When: []ArgCond{ArgIs(argAddr, null), ArgIs(argHigh, null)}, Action: Allow, Why: "no address"},
		{Name: "send", Syscall: sysSend, When: []ArgCond{ArgMaskedIsNot(Arg{N: 1, Name: "type"}, Value{"MASK", 0xf}, Value{"TEN", 10})}, Action: Errno(unix.EACCES), Why: "refused"},
	},
}

// TestTableFilter: a table's rows become the compiler's rules in order,
// a HasAny's bits one mask, an argument's half its High.
func TestTableFilter(t *testing.T) {
	want := Filter{Arch: native, SecondABI: x32, Foreign: eperm, Default: allow, Rules: []Rule{
		{Nr: 2, When: []Cond{{Arg: 1, Test: HasAny, Values: []uint32{0x41}}}, Action: notify},
		{Nr: 44, When: []Cond{{Arg: 4, Test: IsOneOf, Values: []uint32{0}}, {Arg: 4, High: true, Test: IsOneOf, Values: []uint32{0}}}, Action: allow},
		{Nr: 44, When: []Cond{{Arg: 1, Mask: 0xf, Test: IsNot, Values: []uint32{10}}}, Action: 0x00050000 | uint32(unix.EACCES)},
	}}
	if got := table.Filter(native, x32); !reflect.DeepEqual(got, want) {
		t.Errorf("Filter =\n%+v\nwant\n%+v", got, want)
	}
}

// TestTableExplain: one line a row, named by the table, between the lines
// for other ABIs and the rest.
func TestTableExplain(t *testing.T) {
	want := []string{
		"test other-abi any call of another ABI than the native one (i386, x32, arm32) EPERM: native numbers",
		"test open-writes open(flags with O_WRONLY or O_CREAT) notify: writes",
		"test send-none sendto(addr NULL, addr>>32 NULL) allow: no address",
		"test send sendto(type&MASK not TEN) EACCES: refused",
		"test otherwise any other call allow: the rest",
	}
	if got := table.Explain(); !slices.Equal(got, want) {
		t.Errorf("Explain =\n%q\nwant\n%q", got, want)
	}
}
