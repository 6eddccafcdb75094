package gitindex

import (
	"encoding/binary"
	"errors"
)

// maxBits bounds the bits a bitmap may set: positions in a shared index,
// whose entries fit in the file.
const maxBits = 1 << 26

// ewahBits reads an EWAH bitmap as git writes it (ewah/ewah_io.c: its size
// in bits, its number of 64-bit words, the words, the position of the last
// run-length word) and returns the positions of its set bits in
// ascending order (ewah_each_bit) and how many bytes it took.
func ewahBits(b []byte) ([]int, int, error) {
	if len(b) < 8 {
		return nil, 0, errors.New("too short")
	}
	words := int(binary.BigEndian.Uint32(b[4:]))
	size := 8 + 8*words + 4
	if words > (len(b)-12)/8 || size > len(b) {
		return nil, 0, errors.New("runs past the end")
	}
	word := func(i int) uint64 { return binary.BigEndian.Uint64(b[8+8*i:]) }
	var bits []int
	pos := 0
	for i := 0; i < words; {
		rlw := word(i)
		run := (int(rlw>>1) & (1<<32 - 1)) * 64
		literals := int(rlw >> 33)
		if rlw&1 != 0 {
			if pos+run > maxBits {
				return nil, 0, errors.New("too many bits")
			}
			for k := 0; k < run; k++ {
				bits = append(bits, pos+k)
			}
		}
		pos += run
		i++
		if literals > words-i {
			return nil, 0, errors.New("literal words run past the end")
		}
		for k := 0; k < literals; k, i = k+1, i+1 {
			w := word(i)
			for c := 0; c < 64; c++ {
				if w&(1<<c) != 0 {
					bits = append(bits, pos+c)
				}
			}
			pos += 64
		}
		if pos > maxBits {
			return nil, 0, errors.New("too many bits")
		}
	}
	return bits, size, nil
}
