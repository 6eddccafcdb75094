package sandbox

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/seccompbpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func raw(prog []byte) []bpf.RawInstruction {
	var out []bpf.RawInstruction
	for i := 0; i < len(prog); i += 8 {
		out = append(out, bpf.RawInstruction{Op: binary.NativeEndian.Uint16(prog[i:]), Jt: prog[i+2], Jf: prog[i+3], K: binary.NativeEndian.Uint32(prog[i+4:])})
	}
	return out
}

// TestCompilerMatchesEmitter runs the emitter's program and the compiler's
// over the same calls in x/net/bpf's VM.
func TestCompilerMatchesEmitter(t *testing.T) {
	oldProg, newProg := SeccompProgram(), compiledProgram()
	t.Logf("emitter: %d instructions, compiler: %d, byte-identical: %v", len(oldProg)/8, len(newProg)/8, bytes.Equal(oldProg, newProg))
	oldRaw, newRaw := raw(oldProg), raw(newProg)

	values := map[uint64]bool{0: true, 1: true, 0xffffffff: true, 0xffffffffffffffff: true, 1 << 32: true}
	for b := range 64 {
		values[1<<b] = true
	}
	for _, r := range rules {
		for _, c := range r.when {
			for _, v := range c.values {
				for _, x := range []uint64{uint64(v), uint64(v) + 1, uint64(v) - 1, uint64(v) | 1<<32, uint64(v) | 0xffffffff00000000,
					uint64(v) | unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK, uint64(v) | 0x30, uint64(v) &^ 1, uint64(v) | unix.CLONE_NEWNS} {
					values[x&0xffffffffffffffff] = true
				}
			}
		}
	}
	for f := range uint64(64) {
		values[f] = true
	}
	var cand []uint64
	for v := range values {
		cand = append(cand, v)
	}
	nrs := map[uint32]bool{}
	for _, r := range rules {
		nrs[uint32(r.nr)] = true
	}
	var tableNrs []uint32
	for nr := range nrs {
		tableNrs = append(tableNrs, nr)
	}
	archs := []uint32{nativeArch, unix.AUDIT_ARCH_I386, unix.AUDIT_ARCH_X86_64, unix.AUDIT_ARCH_AARCH64, unix.AUDIT_ARCH_ARM, 0, 0xffffffff}

	n, differ := 0, 0
	try := func(c seccompbpf.Call) {
		n++
		o, err1 := seccompbpf.Run(oldRaw, c)
		w, err2 := seccompbpf.Run(newRaw, c)
		if err1 != nil || err2 != nil {
			t.Fatalf("%+v: %v, %v", c, err1, err2)
		}
		if o != w {
			differ++
			if differ < 20 {
				t.Errorf("%+v: emitter %#x, compiler %#x", c, o, w)
			}
		}
	}
	for _, arch := range archs {
		// every number, with and without x32's bit, no arguments
		for nr := uint32(0); nr < 1024; nr++ {
			try(seccompbpf.Call{Arch: arch, Nr: nr})
			try(seccompbpf.Call{Arch: arch, Nr: nr | 0x40000000})
		}
		try(seccompbpf.Call{Arch: arch, Nr: 0xffffffff})
	}
	// every pair of candidates in arguments 0 and 1, and 0 and 2, for the
	// table's syscalls on the native ABI and as x32 calls
	for _, arch := range []uint32{nativeArch} {
		for _, nr := range tableNrs {
			for _, nr := range []uint32{nr, nr | 0x40000000} {
				for _, a := range cand {
					for _, b := range cand {
						try(seccompbpf.Call{Arch: arch, Nr: nr, Args: [6]uint64{a, b}})
						try(seccompbpf.Call{Arch: arch, Nr: nr, Args: [6]uint64{a, unix.SOCK_RAW, b}})
					}
				}
			}
		}
	}
	// random calls of the table's syscalls, every argument a candidate
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		c := seccompbpf.Call{Arch: nativeArch, Nr: tableNrs[rng.IntN(len(tableNrs))]}
		for i := range c.Args {
			c.Args[i] = cand[rng.IntN(len(cand))]
		}
		try(c)
	}
	t.Logf("%d calls, %d candidate argument values, %d decided differently", n, len(cand), differ)
}
