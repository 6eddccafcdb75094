package seccompbpf

import (
	"encoding/binary"
	"errors"

	"golang.org/x/net/bpf"
)

// A Call is the struct seccomp_data of one system call.
type Call struct {
	Arch, Nr uint32
	Args     [6]uint64
}

// Run decides a call with x/net/bpf's virtual machine, as the kernel
// would: the tests of both filters run them so on sample calls.
func Run(prog []bpf.RawInstruction, c Call) (uint32, error) {
	insts, ok := bpf.Disassemble(prog)
	if !ok {
		return 0, errors.New("the program has an instruction x/net/bpf does not know")
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		return 0, err
	}
	action, err := vm.Run(c.data())
	return uint32(action), err
}

// data is the call's seccomp_data as the virtual machine must see it: the
// kernel loads each 32-bit word in native (little-endian) order, the
// machine in network order, so each word is written big-endian where the
// kernel has it, an argument's low half first.
func (c Call) data() []byte {
	data := make([]byte, offArgs+8*len(c.Args))
	binary.BigEndian.PutUint32(data[offNr:], c.Nr)
	binary.BigEndian.PutUint32(data[offArch:], c.Arch)
	for i, a := range c.Args {
		binary.BigEndian.PutUint32(data[offArgs+8*i:], uint32(a))
		binary.BigEndian.PutUint32(data[offArgs+8*i+4:], uint32(a>>32))
	}
	return data
}
