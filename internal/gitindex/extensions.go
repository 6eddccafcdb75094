package gitindex

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

const (
	extLink    = "link"
	extResolve = "REUC"
	extEOIE    = "EOIE"
	extIEOT    = "IEOT"
	// git's EOIE record is 24 bytes in either object format: an offset
	// and a SHA-1-sized hash (read-cache.c's EOIE_SIZE).
	eoieSize = 4 + SHA1
)

// extensions reads the extensions after the entries, as git's loop does:
// while a header and the trailing hash fit. An extension git does not know
// and may not ignore (its name not upper case) makes git die, and is
// refused; so is one running past the end, which git never writes.
func (r *reader) extensions(ix *Index, offsets []int) error {
	d := r.data
	limit := len(d) - r.hashSize - 8
	var ieot []byte
	eoie := -1
	for off := r.end; off <= limit; {
		name := string(d[off : off+4])
		size := int(binary.BigEndian.Uint32(d[off+4:]))
		body := off + 8
		if size > len(d)-r.hashSize-body {
			return fmt.Errorf("extension %q runs past the end", name)
		}
		data := d[body : body+size]
		switch name {
		case extLink:
			if err := r.link(ix, data); err != nil {
				return err
			}
		case extResolve:
			if err := r.resolveUndo(ix, data); err != nil {
				return err
			}
		case extIEOT:
			ieot = data
		case extEOIE:
			eoie = off
		case "TREE", "UNTR", "FSMN", "sdir":
			// No path git writes into the working tree.
		default:
			if name[0] < 'A' || name[0] > 'Z' {
				return fmt.Errorf("extension %q, which git does not know", name)
			}
		}
		off = body + size
	}
	return r.threaded(ieot, eoie, offsets)
}

// threaded checks what git reads when it reads with threads: the
// extensions from the offset an end-of-entries record (EOIE) names, and
// the entries in the blocks an offset table (IEOT) names, each block's
// first entry with no previous name. Both must agree with reading in
// order: the record names where the entries end, the table's blocks start
// at entries and cover them all, and a version 4 block's first name needs
// nothing of the entry before it.
func (r *reader) threaded(ieot []byte, eoie int, offsets []int) error {
	d := r.data
	// git looks for the record at its fixed place from the end, whatever
	// the walk above found.
	at := len(d) - r.hashSize - 8 - eoieSize
	if at >= headerSize && string(d[at:at+4]) == extEOIE && binary.BigEndian.Uint32(d[at+4:]) == eoieSize {
		if int(binary.BigEndian.Uint32(d[at+8:])) != r.end {
			return errors.New("end-of-entries record names another place than the entries' end")
		}
	} else if eoie >= 0 {
		return errors.New("end-of-entries record not at the end")
	}
	if ieot == nil {
		return nil
	}
	if len(ieot) < 4 || binary.BigEndian.Uint32(ieot) != 1 || (len(ieot)-4)%8 != 0 {
		return errors.New("offset table malformed")
	}
	at = 0
	for b := ieot[4:]; len(b) >= 8; b = b[8:] {
		off, nr := int(binary.BigEndian.Uint32(b)), int(binary.BigEndian.Uint32(b[4:]))
		if at >= len(offsets)-1 || offsets[at] != off || !r.blockSafe[at] || nr > len(offsets)-1-at {
			return errors.New("offset table disagrees with the entries")
		}
		at += nr
	}
	if at != len(offsets)-1 {
		return errors.New("offset table does not cover the entries")
	}
	return nil
}

// resolveUndo reads the paths of the resolve-undo extension: per path, a
// NUL-ended name, three octal modes each ended by a NUL, and an object ID
// per non-zero mode.
func (r *reader) resolveUndo(ix *Index, data []byte) error {
	for len(data) > 0 {
		end := indexByte(data, 0)
		if end < 0 {
			return errors.New("resolve-undo name runs past the end")
		}
		path := string(data[:end])
		data = data[end+1:]
		var modes [3]uint32
		for i := range modes {
			end := indexByte(data, 0)
			if end < 0 {
				return errors.New("resolve-undo mode runs past the end")
			}
			var m uint64
			for _, c := range data[:end] {
				if c < '0' || c > '7' || m > 0o7777777 {
					return errors.New("resolve-undo mode not octal")
				}
				m = m*8 + uint64(c-'0')
			}
			modes[i] = uint32(m)
			data = data[end+1:]
		}
		for _, m := range modes {
			if m == 0 {
				continue
			}
			if len(data) < r.hashSize {
				return errors.New("resolve-undo object ID runs past the end")
			}
			ix.Undo = append(ix.Undo, Entry{Path: path, Mode: m, ID: string(data[:r.hashSize])})
			data = data[r.hashSize:]
		}
	}
	return nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// link reads the link extension: the shared index's hash, then, unless
// it ends there, the delete and replace bitmaps, nothing after.
func (r *reader) link(ix *Index, data []byte) error {
	if len(data) < r.hashSize {
		return errors.New("link extension too short")
	}
	ix.Shared = hex.EncodeToString(data[:r.hashSize])
	data = data[r.hashSize:]
	if len(data) == 0 {
		return nil
	}
	deleted, n, err := ewahBits(data)
	if err != nil {
		return fmt.Errorf("delete bitmap: %w", err)
	}
	replaced, m, err := ewahBits(data[n:])
	if err != nil {
		return fmt.Errorf("replace bitmap: %w", err)
	}
	if n+m != len(data) {
		return errors.New("garbage at the end of the link extension")
	}
	ix.deleted, ix.replaced = deleted, replaced
	return nil
}
