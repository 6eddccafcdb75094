package warden

import (
	"math/rand/v2"
	"testing"

	"github.com/claude-sandbox/claude-sandbox/internal/seccompbpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func raw(prog []insn) []bpf.RawInstruction {
	out := make([]bpf.RawInstruction, len(prog))
	for i, in := range prog {
		out[i] = bpf.RawInstruction{Op: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	return out
}

// TestCompilerMatchesEmitter runs the emitter's program and the compiler's
// over the same calls in x/net/bpf's VM.
func TestCompilerMatchesEmitter(t *testing.T) {
	compiled, err := compiledProgram()
	if err != nil {
		t.Fatal(err)
	}
	oldRaw, newRaw := raw(program()), raw(compiled)
	t.Logf("emitter: %d instructions, compiler: %d", len(oldRaw), len(newRaw))
	for i := range min(len(oldRaw), len(newRaw)) {
		if oldRaw[i] != newRaw[i] {
			t.Logf("instruction %d: emitter %v, compiler %v", i, oldRaw[i].Disassemble(), newRaw[i].Disassemble())
		}
	}

	values := map[uint64]bool{0: true, 1: true, 0xffffffff: true, 0xffffffffffffffff: true, 1 << 32: true,
		0x7f0012345678: true, 0x7f0000000000: true, 0x1000: true, writeFlags: true, unix.O_TMPFILE | unix.O_WRONLY: true,
		unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW: true, unix.O_PATH | unix.O_DIRECTORY: true}
	for b := range 64 {
		values[1<<b] = true
		values[1<<b|unix.O_CREAT] = true
		values[1<<b|unix.O_CLOEXEC] = true
	}
	var cand []uint64
	for v := range values {
		cand = append(cand, v)
	}
	var tableNrs []uint32
	for _, c := range calls() {
		tableNrs = append(tableNrs, uint32(c.nr))
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
		for nr := uint32(0); nr < 1024; nr++ {
			try(seccompbpf.Call{Arch: arch, Nr: nr})
			try(seccompbpf.Call{Arch: arch, Nr: nr | 0x40000000})
		}
		try(seccompbpf.Call{Arch: arch, Nr: 0xffffffff})
	}
	// every candidate in each argument, and every pair in the flags'
	// arguments (1, 2) and with sendto's destination (4), for the table's
	// calls, native and x32
	for _, arch := range []uint32{nativeArch} {
		for _, nr := range tableNrs {
			for _, nr := range []uint32{nr, nr | 0x40000000} {
				for _, a := range cand {
					for i := range 6 {
						var args [6]uint64
						args[i] = a
						try(seccompbpf.Call{Arch: arch, Nr: nr, Args: args})
					}
					for _, b := range cand {
						try(seccompbpf.Call{Arch: arch, Nr: nr, Args: [6]uint64{1: a, 2: b}})
						try(seccompbpf.Call{Arch: arch, Nr: nr, Args: [6]uint64{1: a, 4: b}})
						try(seccompbpf.Call{Arch: arch, Nr: nr, Args: [6]uint64{2: a, 4: b}})
					}
				}
			}
		}
	}
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
